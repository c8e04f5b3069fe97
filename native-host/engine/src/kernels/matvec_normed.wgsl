// Decode's products with the RMSNorm before them folded in: y = W·(x / rms(x) * g), one
// dispatch where there were two (a decode step is short enough that each dispatch's fixed cost,
// not its work, sets the pace). Every workgroup works out the norm of x for itself into
// workgroup memory — x is one token's hidden state, a few thousand floats — and the weight
// type's `part_dot` then reads that `X` as it would the storage binding of matvec.wgsl, but
// for one unused vec4 after each 32-element part (`X_PART` = 9): the invocations of a row read
// consecutive parts at once, which packed would start 128 bytes apart, all in the same banks
// of workgroup memory; padded, each starts 16 bytes further round the banks.
//
// Two forms, by the header's `GATED`:
// - split: the rows of W (several matrices joined in one upload, e.g. q, k and v) go to up to
//   three outputs: rows before `split1` to Y0, then to Y1 until `split2`, the rest to Y2, each
//   plus its bias where `bias` is set;
// - gated: W is the gate matrix followed by the up matrix (`split1` rows each) and row r gives
//   Y0[r] = act(gate·x) * (up·x), the FFN's activation folded in too.
//
// The Rust side prepends `WG`, `TPR`, `DIM4` (x's length / 4), `GATED`, `ACT` (0: SiLU,
// 1: GELU, tanh form) and `X_PART`, and appends the weight words, the type's `part_dot` and a
// `row_sum`.

struct Fused {
    rows: u32,       // rows computed (gated: of each matrix)
    cols: u32,       // x's length, a multiple of 32
    row_bytes: u32,
    eps: f32,
    split1: u32,
    split2: u32,
    bias: u32,       // 1: add B[row]
    y0_offset: u32,  // index in Y0 of this binding's first row (a matrix in several chunks)
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> XIN: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> G: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> B: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y0: array<f32>;
@group(0) @binding(5) var<storage, read_write> Y1: array<f32>;
@group(0) @binding(6) var<storage, read_write> Y2: array<f32>;
@group(0) @binding(7) var<uniform> P: Fused;

var<workgroup> X: array<vec4<f32>, DIM4 / 8u * X_PART>;
var<workgroup> squares: array<f32, WG>;

const ROWS_PER_WG: u32 = WG / TPR;

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    var s = 0.0;
    for (var i = li; i < DIM4; i += WG) {
        let v = XIN[i];
        s += dot(v, v);
    }
    squares[li] = s;
    workgroupBarrier();
    for (var k = WG / 2u; k > 0u; k >>= 1u) {
        if (li < k) {
            squares[li] += squares[li + k];
        }
        workgroupBarrier();
    }
    let scale = 1.0 / sqrt(squares[0] / f32(DIM4 * 4u) + P.eps);
    for (var i = li; i < DIM4; i += WG) {
        X[i / 8u * X_PART + i % 8u] = XIN[i] * scale * G[i];
    }
    workgroupBarrier();

    let row = (wg.x + wg.y * nwg.x) * ROWS_PER_WG + li / TPR;
    let t = li % TPR;
    var a = 0.0;
    var b = 0.0;
    if (row < P.rows) {
        let parts = P.cols / 32u;
        for (var p = t; p < parts; p += TPR) {
            a += part_dot(row * P.row_bytes, p);
            if (GATED) {
                b += part_dot((P.split1 + row) * P.row_bytes, p);
            }
        }
    }
    let ta = row_sum(a, li, t);
    var tb = 0.0;
    if (GATED) {
        tb = row_sum(b, li, t);
    }
    if (t != 0u || row >= P.rows) {
        return;
    }
    if (GATED) {
        Y0[P.y0_offset + row] = act(ta) * tb;
        return;
    }
    var v = ta;
    if (P.bias != 0u) {
        v += B[row];
    }
    if (row < P.split1) {
        Y0[P.y0_offset + row] = v;
    } else if (row < P.split2) {
        Y1[row - P.split1] = v;
    } else {
        Y2[row - P.split2] = v;
    }
}
