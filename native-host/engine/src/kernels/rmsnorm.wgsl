// RMSNorm of each row: y = x / sqrt(mean(x²) + eps) * g, as ggml_rms_norm then ggml_mul; or
// y += that, where `add` is set (Gemma's post-norms, which feed the residual stream: the add
// that would follow as a dispatch of its own). One workgroup per row (a token's hidden state,
// or one head of it for Gemma's q/k norms); the weight g has one value per column. Gemma's GGUF
// weights already include its "+1".

struct Params {
    n: u32,    // columns
    eps: f32,
    add: u32,  // 1: Y += the norm; 0: Y = the norm
    _pad1: u32,
}

@group(0) @binding(0) var<storage, read> X: array<f32>;
@group(0) @binding(1) var<storage, read> G: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: Params;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let base = wg.x * P.n;
    var s = 0.0;
    for (var i = li; i < P.n; i += WG) {
        let v = X[base + i];
        s += v * v;
    }
    let scale = 1.0 / sqrt(reduce(li, s, false) / f32(P.n) + P.eps);
    for (var i = li; i < P.n; i += WG) {
        let v = X[base + i] * scale * G[i];
        if (P.add != 0u) {
            Y[base + i] += v;
        } else {
            Y[base + i] = v;
        }
    }
}
