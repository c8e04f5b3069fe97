// What the forms of causal attention share (attention.wgsl and attention_block.wgsl for GPUs,
// attention_lane*.wgsl for CPU drivers): their bindings and which positions a new token attends
// to. Token r of the batch sits at position pos + r and attends to the positions before it and itself — the last `window`
// of them when the layer has a sliding window (Gemma 3's local layers), all of them otherwise.
// Decode is a batch of one. Grouped-query attention: query head h reads KV head
// h / (heads / kv_heads). The cache holds, per position, kv_heads × head_dim values in f16, two
// to a word (kv_cache.wgsl); Q and O hold, per token, heads × head_dim floats.

struct Params {
    head_dim: u32,
    heads: u32,
    kv_heads: u32,
    window: u32,      // 0: none
    capacity: u32,    // positions the cache holds
    scale: f32,
    max_tokens: u32,  // the dispatch's tokens per head
    splits: u32,      // slices of the keys, one workgroup each (attention.wgsl); 1 elsewhere
}

@group(0) @binding(0) var<storage, read> Q: array<f32>;
// K and V (bindings 1 and 2) are declared by how the kernel meets the cache:
// attention_cache_read.wgsl or attention_rope.wgsl.
@group(0) @binding(3) var<storage, read_write> O: array<f32>;
@group(0) @binding(4) var<uniform> STEP: Step;
// P (a uniform of Params) is declared by each form after its own bindings.

// The positions token r of the batch attends to: start..end (key_slices.wgsl).
fn key_range(r: u32) -> vec2<u32> {
    return keys_of(STEP.pos, r, P.capacity, P.window);
}

// Four cache words unpacked: their low halves (even dims) and their high halves (odd dims).
fn halves(w: vec4<u32>) -> array<vec4<f32>, 2> {
    let a = unpack2x16float(w.x);
    let b = unpack2x16float(w.y);
    let c = unpack2x16float(w.z);
    let d = unpack2x16float(w.w);
    return array<vec4<f32>, 2>(vec4<f32>(a.x, b.x, c.x, d.x), vec4<f32>(a.y, b.y, c.y, d.y));
}
