// Dequantising matrix-vector product y = W·x (or y += W·x, a residual connection folded into the
// product), one matrix row per TPR invocations.
//
// The Rust side prepends `const WG: u32` (workgroup size) and `const TPR: u32` (invocations per
// row), then appends one `part_dot` (the weight type's layout, from mv_<type>.wgsl) and one
// `row_sum` (how the TPR partial sums of a row are combined). Work is cut into 32-element "parts"
// for every type — a whole block of the legacy formats, a sub-block (one scale) of the k-quants —
// so the same loop serves all types and a row of only two k-quant blocks still spreads over TPR
// invocations on a GPU.
//
// On a GPU x is staged in workgroup memory first, laid out as in matvec_normed.wgsl (an unused
// vec4 after each part, so that the row's invocations reading consecutive parts at once hit
// different banks); the Rust side then binds the storage as XIN and puts the staging loop at
// `// STAGE X`. Read from its storage binding instead, those same reads would each touch 32
// different cache lines.
//
// W is the tensor's GGUF bytes as they are in the file, read as u32 words: some block sizes (18,
// 34, 210 bytes) are only 2-byte aligned, which `ld16`/`ld32` handle. One binding holds whole rows
// only; a tensor larger than the device's storage binding is several bindings and dispatches, each
// told where its rows land in Y by `row_offset`.

struct Output {
    add: u32,         // 1: y += W·x; 0: y = W·x
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

struct Params {
    rows: u32,        // rows in this binding
    cols: u32,        // elements per row (a multiple of 32)
    row_offset: u32,  // index in Y of this binding's first row
    row_bytes: u32,   // bytes per row in W
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
// X
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;
@group(0) @binding(4) var<uniform> OUT: Output;

const ROWS_PER_WG: u32 = WG / TPR;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // STAGE X
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
        if (OUT.add != 0u) {
            Y[P.row_offset + row] += total;
        } else {
            Y[P.row_offset + row] = total;
        }
    }
}
