// A prefill batch's causal attention on cooperative matrices (tensor cores), in
// attention_block.wgsl's blocks: a workgroup per block of BR query rows of one KV head (row
// t·group + g for token t and the KV head's g-th query head), walking the keys the block sees
// BK at a time, with an online softmax.
//
// Four subgroups share each tile. The scores S = Q·Kᵀ (BR × BK) are fragments of F×F, a
// subgroup taking every fourth, summed in f32 over the head from the staged f16 queries (scaled)
// and keys, and stored to workgroup memory; the tile's values then take the keys' place, so that
// heads of 256 fit 48 KiB in blocks of 16×16 fragments. Every invocation then takes a part of
// one row's scores: masked, the row's new maximum, the probabilities rounded to f16 for the next
// product, their sum, and how much the row's output so far shrinks. The tile's output P·V (BR × HD) is
// fragments too, a subgroup's at a time, passed through workgroup memory to the invocations that
// keep them, each adding it to its own part of the output, rescaled (its E sums of each
// subgroup's fragment: coop_block.wgsl's layout).
//
// The Rust side prepends the enables, F, SG, WG = 4·SG, HD (the head size), BR query rows and
// BK keys (whole fragments, two at least), PER_ROW = WG / BR (invocations sharing a row's
// softmax) and E = F·F / SG, and writes coop_matFxF with the size. Bindings and semantics in
// attention_common.wgsl.

@group(0) @binding(5) var<uniform> P: Params;

// Cache words (two dims) of a head's row.
const HW: u32 = HD / 2u;
// Staged f16 rows are 8 halves (16 bytes) longer than their data, and f32 rows 4 floats, so
// that the rows a fragment reads together start in different banks, each 16-byte aligned.
const QS: u32 = HD + 8u;
const PS: u32 = BK + 8u;
const SS: u32 = BK + 4u;
// Fragments of the scores, and of the output.
const NS: u32 = (BR / F) * (BK / F);
const NO: u32 = (BR / F) * (HD / F);
const MASKED: f32 = -3.4028235e38;
const F16_MAX: f32 = 65504.0;

var<workgroup> qs: array<f16, BR * QS>;
// The tile's keys; once the scores are stored, its values.
var<workgroup> kv: array<f16, BK * QS>;
// The tile's scores; then, a fragment of each subgroup at a time, its output.
var<workgroup> ss: array<f32, max(BR * SS, 4u * F * F)>;
var<workgroup> ps: array<f16, BR * PS>;
// Each invocation's part of its row's maximum and sum; each row's rescaling and final sum.
var<workgroup> part_max: array<f32, WG>;
var<workgroup> part_sum: array<f32, WG>;
var<workgroup> shrink: array<f32, BR>;
var<workgroup> sums: array<f32, BR>;

// The output row and dim of sum `n` an invocation keeps of fragment round `round`.
fn out_at(round: u32, n: u32, li: u32) -> vec2<u32> {
    let el = li + n * WG;
    let f = round * 4u + el / (F * F);
    let within = el % (F * F);
    return vec2<u32>((f / (HD / F)) * F + within / F, (f % (HD / F)) * F + within % F);
}

// Stages the keys (or the values) of the tile from key b into kv, in f16; keys at or past
// `end`, the block's last, are loaded from it and masked by the softmax.
fn stage(b: u32, end: u32, kv_head: u32, li: u32, keys: bool) {
    for (var i = li; i < BK * HW; i += WG) {
        let key = i / HW;
        let w = i % HW;
        let word = cache_word(min(b + key, end - 1u), kv_head, w);
        var pair: vec2<f32>;
        if (keys) {
            pair = unpack2x16float(K[word]);
        } else {
            pair = unpack2x16float(V[word]);
        }
        kv[key * QS + 2u * w] = f16(pair.x);
        kv[key * QS + 2u * w + 1u] = f16(pair.y);
    }
}

@compute @workgroup_size(WG)
fn main(
    @builtin(local_invocation_index) li: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
) {
    let kv_head = wg.x;
    let group = P.heads / P.kv_heads;
    let rows = STEP.tokens * group;
    let first_row = wg.y * BR;
    if (first_row >= rows) {
        return;
    }
    let last_row = min(first_row + BR, rows) - 1u;
    let keys = block_keys(first_row, last_row, group);

    for (var i = li; i < BR * HD; i += WG) {
        let r = i / HD;
        let d = i % HD;
        let q = Q[q_offset(min(first_row + r, rows - 1u), kv_head, group) + d] * P.scale;
        qs[r * QS + d] = f16(clamp(q, -F16_MAX, F16_MAX));
    }

    let row = li / PER_ROW;
    let part = li % PER_ROW;
    let has_row = first_row + row < rows;
    let own = key_range(min(first_row + row, rows - 1u) / group);
    // This invocation's row: its running maximum and sum (kept alike by each of its PER_ROW).
    var m = MASKED;
    var l = 0.0;
    // The output sums this invocation keeps: E of each round's fragments.
    var acc: array<f32, (NO / 4u) * E>;
    var zero: coop_matFxF<f32, C>;
    for (var b = keys.x; b < keys.y; b += BK) {
        // The queries are staged, and every invocation is done with the last tile.
        workgroupBarrier();
        stage(b, keys.y, kv_head, li, true);
        workgroupBarrier();
        // S = Q·Kᵀ: A is the queries by dims, row-major; B the dims by keys, which is the
        // staged keys read column-major.
        for (var f = sg; f < NS; f += 4u) {
            let r0 = (f / (BK / F)) * F;
            let k0 = (f % (BK / F)) * F;
            var s = zero;
            for (var d = 0u; d < HD; d += F) {
                let a = coopLoadT<coop_matFxF<f16, A>>(&qs[r0 * QS + d], QS);
                let kt = coopLoad<coop_matFxF<f16, B>>(&kv[k0 * QS + d], QS);
                s = coopMultiplyAdd(a, kt, s);
            }
            coopStoreT(s, &ss[r0 * SS + k0], SS);
        }
        // The scores are stored and the keys read: the values take their place, loaded while
        // the softmax begins.
        workgroupBarrier();
        stage(b, keys.y, kv_head, li, false);
        var most = MASKED;
        for (var j = part; j < BK; j += PER_ROW) {
            let t = b + j;
            if (has_row && t >= own.x && t < own.y) {
                most = max(most, ss[row * SS + j]);
            }
        }
        part_max[li] = most;
        workgroupBarrier();
        var m_new = m;
        for (var i = 0u; i < PER_ROW; i++) {
            m_new = max(m_new, part_max[row * PER_ROW + i]);
        }
        var sum = 0.0;
        for (var j = part; j < BK; j += PER_ROW) {
            let t = b + j;
            var p = 0.0;
            if (has_row && t >= own.x && t < own.y) {
                p = exp(ss[row * SS + j] - m_new);
            }
            sum += p;
            ps[row * PS + j] = f16(p);
        }
        part_sum[li] = sum;
        // A row that has seen no key yet keeps a maximum of MASKED and nothing to shrink.
        let c = exp(m - m_new);
        if (part == 0u) {
            shrink[row] = c;
        }
        m = m_new;
        workgroupBarrier();
        l *= c;
        for (var i = 0u; i < PER_ROW; i++) {
            l += part_sum[row * PER_ROW + i];
        }
        // O = O·shrink + P·V, a fragment of each subgroup at a time: A is the probabilities by
        // keys, B the keys by dims, both row-major.
        for (var round = 0u; round < NO / 4u; round++) {
            let f = round * 4u + sg;
            let r0 = (f / (HD / F)) * F;
            let d0 = (f % (HD / F)) * F;
            var o = zero;
            for (var k = 0u; k < BK; k += F) {
                let a = coopLoadT<coop_matFxF<f16, A>>(&ps[r0 * PS + k], PS);
                let v = coopLoadT<coop_matFxF<f16, B>>(&kv[k * QS + d0], QS);
                o = coopMultiplyAdd(a, v, o);
            }
            if (round > 0u) {
                // The sums of the round before have been added.
                workgroupBarrier();
            }
            coopStoreT(o, &ss[sg * F * F], F);
            workgroupBarrier();
            for (var n = 0u; n < E; n++) {
                let at = out_at(round, n, li);
                let e = round * E + n;
                acc[e] = acc[e] * shrink[at.x] + ss[li + n * WG];
            }
        }
    }
    if (part == 0u) {
        sums[row] = l;
    }
    workgroupBarrier();
    for (var round = 0u; round < NO / 4u; round++) {
        for (var n = 0u; n < E; n++) {
            let at = out_at(round, n, li);
            if (first_row + at.x < rows) {
                O[q_offset(first_row + at.x, kv_head, group) + at.y] = acc[round * E + n] / sums[at.x];
            }
        }
    }
}
