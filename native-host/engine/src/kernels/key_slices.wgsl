// Which cached positions a new token attends to, and how decode cuts them into slices: shared by
// the attention kernels and attention_combine.wgsl, which must agree on both.

// The positions token r of a batch starting at `pos` attends to, start..end: the positions before
// it and itself, the last `window` of them when the layer has a sliding window (0: none).
fn keys_of(pos: u32, r: u32, capacity: u32, window: u32) -> vec2<u32> {
    let end = min(pos + r + 1u, capacity);
    var start = 0u;
    if (window > 0u && end > window) {
        start = end - window;
    }
    return vec2<u32>(start, end);
}

// Keys per slice when `keys` are cut into `splits` slices of whole `block`s (at least one block).
fn slice_len(keys: vec2<u32>, splits: u32, block: u32) -> u32 {
    return (keys.y - keys.x + splits * block - 1u) / (splits * block) * block;
}

// Slice s of `keys`: empty (start == end) past the last key. The first slice is never empty.
fn slice_of(keys: vec2<u32>, s: u32, splits: u32, block: u32) -> vec2<u32> {
    let per = slice_len(keys, splits, block);
    let first = min(keys.x + s * per, keys.y);
    return vec2<u32>(first, min(first + per, keys.y));
}

// How many slices hold keys.
fn slices_used(keys: vec2<u32>, splits: u32, block: u32) -> u32 {
    let per = slice_len(keys, splits, block);
    return (keys.y - keys.x + per - 1u) / per;
}
