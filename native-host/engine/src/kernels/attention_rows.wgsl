// The block kernels' query rows (attention_block.wgsl, attention_coop.wgsl): a block holds rows of
// one KV head, row t·group + g being token t's query head g of that KV head, so consecutive rows
// are consecutive tokens' grouped heads. The kernel declares HD and P.

// Where the query of row `row` lies in Q.
fn q_offset(row: u32, kv_head: u32, group: u32) -> u32 {
    return ((row / group) * P.heads + kv_head * group + row % group) * HD;
}

// The union of the keys rows first_row..=last_row see: their tokens are consecutive, their
// ranges ordered.
fn block_keys(first_row: u32, last_row: u32, group: u32) -> vec2<u32> {
    return vec2<u32>(key_range(first_row / group).x, key_range(last_row / group).y);
}
