// The matrix-matrix product of prefill over matrices joined in one upload (GpuMatrix::
// upload_joined), one dispatch where there were two or three, each dispatch about as long as
// one of them: a small product leaves most of a large GPU idle, so joining them is nearly free.
// Two forms, by the header's `GATED` (as matvec_normed.wgsl's):
// - split: W's rows go to up to three outputs, each with its own token stride: rows before
//   `split1` to Y0, then to Y1 until `split2`, the rest to Y2; plus BIAS[row] where `bias` is set;
// - gated: W is the gate matrix followed by the up matrix (`split1` rows each) and row r of
//   token t gives Y0[t][r] = act(gate·x_t) * (up·x_t).
// The Rust side prepends `WG`, `TT`, `GATED`, `ACT` and the bindings
// (matmul_joined_bindings.wgsl), and appends what matmul.wgsl has.

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    // LANE
) {
    let row = (wg.x + wg.z * nwg.x) * WG + li;
    let t0 = wg.y * TT;
    if (t0 >= STEP.tokens) {
        return;
    }
    let last = min(row, P.rows - 1u);
    let a = tile_sums(last * P.row_bytes, P.cols, t0, lane);
    var b = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    if (GATED) {
        b = tile_sums((J.split1 + last) * P.row_bytes, P.cols, t0, lane);
    }
    if (row >= P.rows) {
        return;
    }
    for (var t = 0u; t < TT; t++) {
        let token = t0 + t;
        if (token >= STEP.tokens) {
            break;
        }
        if (GATED) {
            Y0[token * P.rows + row] = act(a[t]) * b[t];
            continue;
        }
        put_split(token, row, a[t]);
    }
}
