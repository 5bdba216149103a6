// layernorm_row: LayerNorm of one row, written once for the kernels that normalise rows with a
// workgroup of WG_X invocations per row (kernels.rs puts this file in front of layernorm and
// add_layernorm). The kernel declares the row it normalises as `ln_src` (P, D), the gain and
// bias as `ln_g`, `ln_b` (D) and the output as `out` (P, D); each invocation owns columns
// lid, lid + WG_X, … of the row.

var<workgroup> red: array<f32, WG_X>;

// The workgroup's sum of `value` (one per invocation), by a tree in workgroup memory.
fn reduce_sum(lid: u32, value: f32) -> f32 {
    red[lid] = value;
    workgroupBarrier();
    for (var s = WG_X / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            red[lid] = red[lid] + red[lid + s];
        }
        workgroupBarrier();
    }
    let total = red[0];
    workgroupBarrier();
    return total;
}

// out = (ln_src − mean) / √(var + ε) · ln_g + ln_b along the row starting at `base`, of width
// `d`; `partial` is this invocation's sum of its columns of ln_src (the mean's share).
fn layernorm_row(lid: u32, base: u32, d: u32, eps: f32, partial: f32) {
    let mean = reduce_sum(lid, partial) / f32(d);
    // variance in a second pass, not E[x²] − E[x]², for accuracy
    var q = 0.0;
    for (var c = lid; c < d; c = c + WG_X) {
        let dev = ln_src[base + c] - mean;
        q = q + dev * dev;
    }
    let inv = 1.0 / sqrt(reduce_sum(lid, q) / f32(d) + eps);
    for (var c = lid; c < d; c = c + WG_X) {
        out[base + c] = (ln_src[base + c] - mean) * inv * ln_g[c] + ln_b[c];
    }
}
