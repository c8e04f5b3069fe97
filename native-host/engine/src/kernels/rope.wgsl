// Rotary position embedding, in place, as ggml_rope_ext: for each token, head and rotated pair
// i < n_dims / 2, rotate the pair by theta = pos * base^(-2i/n_dims) (computed as ggml computes
// it, by repeated multiplication, so positions far into the context round the same way; the
// factor comes from the host because drivers' pow is too loose: 1e-7 of it is 1e-4 rad at 1000),
// divided by the model's frequency factor for i (Llama 3's rope_freqs; 1 elsewhere) and scaled
// by freq_scale, with YaRN's ramp when ext_factor is not 0.
// "Normal" ordering (llama GGUFs, whose q/k rows the converter permuted) rotates (x[2i], x[2i+1]);
// NeoX ordering (Qwen2, Gemma 3) rotates (x[i], x[i + n_dims/2]). Dims from n_dims on are untouched.

struct Params {
    head_dim: u32,
    n_dims: u32,
    heads: u32,
    tokens: u32,
    _unused: u32,
    neox: u32,
    freq_base: f32,
    freq_scale: f32,
    ext_factor: f32,
    attn_factor: f32,
    corr_low: f32,
    corr_high: f32,
    theta_scale: f32, // base^(-2/n_dims), computed by the host with the CPU's powf
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<storage, read_write> X: array<f32>;

@group(0) @binding(1) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(2) var<uniform> STEP: Step;
@group(0) @binding(3) var<uniform> P: Params;

const WG: u32 = 64u;

// 2π in three parts (8, 12 and 24 significant bits): k * TWO_PI_A is exact for k < 2^16.
const TWO_PI_A: f32 = 6.28125;
const TWO_PI_B: f32 = 0.0019350051879882812;
const TWO_PI_C: f32 = 3.019916050561733e-07;

// The angle brought into [-π, π] (Cody-Waite). Angles reach thousands of radians deep in the
// context, and drivers' sin/cos are only held to their precision within [-π, π] (lavapipe's
// drift by 1e-4 at 1000 rad); CPU sinf/cosf, which llama.cpp uses, reduce exactly.
fn reduce_angle(t: f32) -> f32 {
    let k = round(t * 0.15915494309189535);
    return ((t - k * TWO_PI_A) - k * TWO_PI_B) - k * TWO_PI_C;
}

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let half = P.n_dims / 2u;
    let idx = gid.x + gid.y * nwg.x * WG;
    if (idx >= P.tokens * P.heads * half) {
        return;
    }
    let i = idx % half;
    let row = idx / half;          // token * heads + head
    let token = row / P.heads;
    var theta = f32(STEP.pos + token);
    for (var k = 0u; k < i; k++) {
        theta *= P.theta_scale;
    }
    let theta_extrap = theta / FREQ_FACTORS[i];
    var t = P.freq_scale * theta_extrap;
    var mscale = P.attn_factor;
    if (P.ext_factor != 0.0) {
        let y = (f32(i) - P.corr_low) / max(0.001, P.corr_high - P.corr_low);
        let mix = (1.0 - min(1.0, max(0.0, y))) * P.ext_factor;
        t = t * (1.0 - mix) + theta_extrap * mix;
        mscale *= 1.0 + 0.1 * log(1.0 / P.freq_scale);
    }
    let r = reduce_angle(t);
    let c = cos(r) * mscale;
    let s = sin(r) * mscale;
    let base = row * P.head_dim;
    var a = base + 2u * i;
    var b = a + 1u;
    if (P.neox != 0u) {
        a = base + i;
        b = base + i + half;
    }
    let x0 = X[a];
    let x1 = X[b];
    X[a] = x0 * c - x1 * s;
    X[b] = x0 * s + x1 * c;
}
