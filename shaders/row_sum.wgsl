// row_sum: a workgroup's sum of one value per invocation (a tree in workgroup memory), for
// the kernels that reduce a row with WG_X invocations (the header kernels.rs writes); the build puts it in front of them
// (kernels.rs: layernorm, add_layernorm). Each invocation stores its value in red[lid] and
// calls reduce_sum after a barrier.

var<workgroup> red: array<f32, WG_X>;

fn reduce_sum(lid: u32) -> f32 {
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

