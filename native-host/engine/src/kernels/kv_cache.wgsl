// The KV cache's layout, shared by the kernels that write it (rope_qk*.wgsl; attention_rope.wgsl
// in decode) and those that read it (attention*.wgsl): per position, kv_heads heads of head_dim
// values in f16, two to a u32 word (pack2x16float: dim 2i in the low half, 2i + 1 in the high).
// Half of f32's bytes, which decode's attention streams once per token, and what llama.cpp keeps
// by default. Each file's P has `head_dim` and `kv_heads`.

// The word holding dims 2i and 2i + 1 of KV head `kv_head` at position `pos`.
fn cache_word(pos: u32, kv_head: u32, i: u32) -> u32 {
    return (pos * P.kv_heads + kv_head) * (P.head_dim / 2u) + i;
}
