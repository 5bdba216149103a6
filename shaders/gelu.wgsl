// gelu: in place over elements [start, end). mode 0: tanh approximation (GPT-2's gelu_new);
// mode 1: exact x·Φ(x) with the error function (Abramowitz & Stegun 7.1.26, as the CPU).

struct Params {
    start: u32,
    end: u32,
    mode: u32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;

fn erf(v: f32) -> f32 {
    let a = abs(v);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let y = 1.0 - (((((1.0614054 * t - 1.4531521) * t) + 1.4214138) * t - 0.28449674) * t + 0.2548296) * t * exp(-a * a);
    return sign(v) * y;
}

@compute @workgroup_size(64)
fn gelu(@builtin(global_invocation_id) gid: vec3<u32>) {
    let idx = p.start + gid.x;
    if (idx >= p.end) {
        return;
    }
    let u = x[idx];
    if (p.mode == 0u) {
        // tanh saturates long before ±15; clamping keeps exp-based tanh implementations finite
        let z = clamp(0.7978846 * (u + 0.044715 * u * u * u), -15.0, 15.0);
        x[idx] = 0.5 * u * (1.0 + tanh(z));
    } else {
        x[idx] = 0.5 * u * (1.0 + erf(u * 0.70710677));
    }
}
