// The cache as attention usually meets it: the step's queries already rotated, and its keys and
// values already stored, by rope_qk*.wgsl's dispatch before this one. attention_rope.wgsl is the
// other way, with the same functions.

@group(0) @binding(1) var<storage, read> K: array<u32>;
@group(0) @binding(2) var<storage, read> V: array<u32>;

const ROTATES: bool = false;

// Dims 2w and 2w + 1 of the query head that starts at q0.
fn query_word(q0: u32, w: u32) -> vec2<f32> {
    return vec2<f32>(Q[q0 + 2u * w], Q[q0 + 2u * w + 1u]);
}

// Only a kernel that rotates calls these.
fn new_key_word(kv_head: u32, w: u32) -> u32 {
    return 0u;
}

fn new_value_word(kv_head: u32, w: u32) -> u32 {
    return 0u;
}

fn store_new(kv_head: u32, w: u32, k: u32, v: u32) {}
