// The rotations of rotary position embedding, as ggml_rope_ext computes them: for each token,
// head and rotated pair i < n_dims / 2, the pair turns by theta = pos * base^(-2i/n_dims)
// (computed as ggml computes it, by repeated multiplication, so positions far into the context
// round the same way; the factor comes from the host because drivers' pow is too loose: 1e-7 of
// it is 1e-4 rad at 1000), divided by the model's frequency factor for i (Llama 3's rope_freqs;
// 1 elsewhere) and scaled by freq_scale, with YaRN's ramp when ext_factor is not 0.
// "Normal" ordering (llama GGUFs, whose q/k rows the converter permuted) rotates (x[2i], x[2i+1]);
// NeoX ordering (Qwen2, Gemma 3) rotates (x[i], x[i + n_dims/2]). Dims from n_dims on are untouched.

struct RopeParams {
    head_dim: u32,
    n_dims: u32,
    heads: u32,
    tokens: u32,
    kv_heads: u32,   // rope_qk.wgsl: the key heads after the query heads
    neox: u32,
    freq_base: f32,
    freq_scale: f32,
    ext_factor: f32,
    attn_factor: f32,
    corr_low: f32,
    corr_high: f32,
    theta_scale: f32, // base^(-2/n_dims), computed by the host with the CPU's powf
    eps: f32,         // rope_qk_normed.wgsl: the head norms' epsilon
    _pad1: u32,
    _pad2: u32,
}

// The main files bind FREQ_FACTORS and STEP, and pass their RopeParams uniform to each function.


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

// The cosine and sine (scaled by YaRN's mscale) that rotate pair `i` of a head of the token at
// `pos`.
fn rotation(rp: RopeParams, i: u32, pos: u32) -> vec2<f32> {
    var theta = f32(pos);
    for (var k = 0u; k < i; k++) {
        theta *= rp.theta_scale;
    }
    let theta_extrap = theta / FREQ_FACTORS[i];
    var t = rp.freq_scale * theta_extrap;
    var mscale = rp.attn_factor;
    if (rp.ext_factor != 0.0) {
        let y = (f32(i) - rp.corr_low) / max(0.001, rp.corr_high - rp.corr_low);
        let mix = (1.0 - min(1.0, max(0.0, y))) * rp.ext_factor;
        t = t * (1.0 - mix) + theta_extrap * mix;
        mscale *= 1.0 + 0.1 * log(1.0 / rp.freq_scale);
    }
    let r = reduce_angle(t);
    return vec2<f32>(cos(r), sin(r)) * mscale;
}

// Element `first` (else the second) of a pair (x0, x1) rotated by `cs`.
fn rotate(x0: f32, x1: f32, cs: vec2<f32>, first: bool) -> f32 {
    if (first) {
        return x0 * cs.x - x1 * cs.y;
    }
    return x0 * cs.y + x1 * cs.x;
}

// The rotated pair dim e (< n_dims) belongs to.
fn pair_of(rp: RopeParams, e: u32) -> u32 {
    if (rp.neox != 0u) {
        return e % (rp.n_dims / 2u);
    }
    return e / 2u;
}

// The offsets of pair `i` within a head.
fn pair(rp: RopeParams, i: u32) -> vec2<u32> {
    if (rp.neox != 0u) {
        return vec2<u32>(i, i + rp.n_dims / 2u);
    }
    return vec2<u32>(2u * i, 2u * i + 1u);
}
