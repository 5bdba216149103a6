// activation: the FFN's activation, a function (not a kernel) that the build puts in front of
// the kernels that apply it (kernels.rs: linear, linear_rows), so that the FFN's first
// linear layer and its GELU are one dispatch.
// mode 0: none; 1: GELU, tanh approximation (GPT-2's gelu_new); 2: exact GELU x·Φ(x) with the
// error function (Abramowitz & Stegun 7.1.26, as the CPU).

fn erf_as(v: f32) -> f32 {
    let a = abs(v);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let y = 1.0 - (((((1.0614054 * t - 1.4531521) * t) + 1.4214138) * t - 0.28449674) * t + 0.2548296) * t * exp(-a * a);
    return sign(v) * y;
}

fn activate(u: f32, mode: u32) -> f32 {
    if (mode == 1u) {
        // tanh saturates long before ±15; clamping keeps exp-based tanh implementations finite
        let z = clamp(0.7978846 * (u + 0.044715 * u * u * u), -15.0, 15.0);
        return 0.5 * u * (1.0 + tanh(z));
    }
    if (mode == 2u) {
        return 0.5 * u * (1.0 + erf_as(u * 0.70710677));
    }
    return u;
}

