// The bindings of the joined matrix-matrix kernels (matmul_joined.wgsl, matmul_joined_coop.wgsl):
// W, X, the bias, the three outputs, the joined matrix's params, the step and the split; and
// where the split form puts a row's sum.

struct Params {
    rows: u32,        // rows computed (gated: of each matrix)
    cols: u32,
    _row_offset: u32,
    row_bytes: u32,
}

struct Joined {
    split1: u32,
    split2: u32,
    bias: u32,
    total: u32,       // W's rows: the split's third stride is total - split2
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> BIAS: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y0: array<f32>;
@group(0) @binding(4) var<storage, read_write> Y1: array<f32>;
@group(0) @binding(5) var<storage, read_write> Y2: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;
@group(0) @binding(7) var<uniform> STEP: Step;
@group(0) @binding(8) var<uniform> J: Joined;

// The split form's `sum` for `row` of `token`, plus the row's bias where there is one, into the
// output the row belongs to.
fn put_split(token: u32, row: u32, sum: f32) {
    var v = sum;
    if (J.bias != 0u) {
        v += BIAS[row];
    }
    if (row < J.split1) {
        Y0[token * J.split1 + row] = v;
    } else if (row < J.split2) {
        Y1[token * (J.split2 - J.split1) + row - J.split1] = v;
    } else {
        Y2[token * (J.total - J.split2) + row - J.split2] = v;
    }
}
