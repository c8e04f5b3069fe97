// The bindings of the matrix-matrix kernels (matmul.wgsl, matmul_coop.wgsl): W, X, Y, the
// matrix binding's params, the step and the product's shape.

struct Params {
    rows: u32,        // rows in this binding
    cols: u32,        // elements per row (a multiple of 32)
    row_offset: u32,  // index in a row of Y of this binding's first row
    row_bytes: u32,   // bytes per row in W
}

struct Shape {
    y_stride: u32,    // floats per row of Y: the matrix's rows
    add: u32,         // 1: Y += X·Wᵀ; 0: Y = X·Wᵀ
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read> W: array<u32>;
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;
@group(0) @binding(4) var<uniform> STEP: Step;
@group(0) @binding(5) var<uniform> S: Shape;
