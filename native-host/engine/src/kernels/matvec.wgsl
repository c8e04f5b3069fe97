// Dequantising matrix-vector product y = W·x, one matrix row per TPR invocations.
//
// The Rust side prepends `const WG: u32` (workgroup size) and `const TPR: u32` (invocations per
// row), then appends one `part_dot` (the weight type's layout, from mv_<type>.wgsl) and one
// `row_sum` (how the TPR partial sums of a row are combined). Work is cut into 32-element "parts"
// for every type — a whole block of the legacy formats, a sub-block (one scale) of the k-quants —
// so the same loop serves all types and a row of only two k-quant blocks still spreads over TPR
// invocations on a GPU.
//
// W is the tensor's GGUF bytes as they are in the file, read as u32 words: some block sizes (18,
// 34, 210 bytes) are only 2-byte aligned, which `ld16`/`ld32` handle. One binding holds whole rows
// only; a tensor larger than the device's storage binding is several bindings and dispatches, each
// told where its rows land in Y by `row_offset`.

struct Params {
    rows: u32,        // rows in this binding
    cols: u32,        // elements per row (a multiple of 32)
    row_offset: u32,  // index in Y of this binding's first row
    row_bytes: u32,   // bytes per row in W
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;

const ROWS_PER_WG: u32 = WG / TPR;

// The 16 bits at byte offset `o` (2-aligned).
fn ld16(o: u32) -> u32 {
    return (W[o >> 2u] >> ((o & 2u) * 8u)) & 0xffffu;
}

// The 32 bits at byte offset `o` (2-aligned), joined from two words when `o` is not 4-aligned.
fn ld32(o: u32) -> u32 {
    let w = o >> 2u;
    if ((o & 2u) == 0u) {
        return W[w];
    }
    return (W[w] >> 16u) | (W[w + 1u] << 16u);
}

// An f16 in the low half of `w`, widened; core WGSL, so no SHADER_F16 feature is needed.
fn f16_lo(w: u32) -> f32 {
    return unpack2x16float(w).x;
}

// The low nibbles of the four bytes of `w`, byte 0 first (after `w >> 4`: the high nibbles).
fn nibbles(w: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(15u));
}

// Bit `b` of each of the four bytes of `w`, as 0 or 1.
fn byte_bits(w: u32, b: u32) -> vec4<f32> {
    return vec4<f32>((vec4<u32>(w) >> (vec4<u32>(0u, 8u, 16u, 24u) + b)) & vec4<u32>(1u));
}

// The four bytes of `w` as signed 8-bit integers.
fn signed_bytes(w: u32) -> vec4<f32> {
    let v = bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u);
    return vec4<f32>(v);
}

fn hsum(v: vec4<f32>) -> f32 {
    return v.x + v.y + v.z + v.w;
}

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // Dispatches wider than the per-dimension limit use y as well.
    let row = (wg.x + wg.y * nwg.x) * ROWS_PER_WG + li / TPR;
    let t = li % TPR;
    var acc = 0.0;
    if (row < P.rows) {
        let base = row * P.row_bytes;
        let parts = P.cols / 32u;
        for (var p = t; p < parts; p += TPR) {
            acc += part_dot(base, p);
        }
    }
    let total = row_sum(acc, li, t);
    if (t == 0u && row < P.rows) {
        Y[P.row_offset + row] = total;
    }
}
