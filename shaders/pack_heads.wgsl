// pack_heads: copies the first T rows × cols of every head of a strided (H, P, row_stride)
// matrix into a compact (H, T, cols) block at dst_offset, for the single trace readback.

struct Params {
    t: u32,
    cols: u32,
    row_stride: u32,
    head_stride: u32,
    dst_offset: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

@compute @workgroup_size(64)
fn pack_heads(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x >= p.t * p.cols) {
        return;
    }
    let i = gid.x / p.cols;
    let j = gid.x % p.cols;
    dst[p.dst_offset + (gid.y * p.t + i) * p.cols + j] = src[gid.y * p.head_stride + i * p.row_stride + j];
}
