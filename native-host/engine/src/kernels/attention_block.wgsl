// Causal attention on GPUs in the manner of flash attention: a workgroup per block of ROWS query
// rows of one KV head (its query heads for consecutive tokens, row t·group + g for token t and
// the KV head's g-th query head), walking the keys the block sees BK at a time.
// Each tile of keys and values is loaded once, coalesced, into workgroup memory and shared by all
// the block's rows, where the per-token form (attention.wgsl) reads every key once per query
// head and token, a whole key row per invocation (a cache line per lane). The softmax is online
// (a running maximum and sum per row), so scores live only as long as their tile.
//
// Decode's one token has a block of its KV head's query heads, so grouped heads share each key's
// load. With P.splits > 1 its keys are cut into slices as attention.wgsl cuts them (whole
// SLICE-key blocks), a workgroup each (wg.z), and each row's running maximum, sum and
// unnormalised output go to PART in attention.wgsl's layout, for attention_combine.wgsl. Decode
// can also rotate its query and store its key and value itself (attention_rope.wgsl).
//
// The Rust side prepends HD (the head size), ROWS, BK, WG and SLICE; PER_ROW = WG / ROWS invocations
// share a row: invocation `part` of it scores keys part, part + PER_ROW, … of each tile and keeps
// the output's cache words part, part + PER_ROW, …, so neither the staged keys nor the staged
// values are read by two invocations of a subgroup from one bank. Bindings and semantics in
// attention_common.wgsl.

@group(0) @binding(5) var<storage, read_write> PART: array<f32>;
@group(0) @binding(6) var<uniform> P: Params;

const PER_ROW: u32 = WG / ROWS;
// Cache words (two dims) of a head's row.
const HW: u32 = HD / 2u;
// A staged row of queries, keys or values: one word more, so consecutive rows start in
// different banks.
const KW: u32 = HW + 1u;
// A staged row of scores, likewise.
const SW: u32 = BK + 1u;
const MASKED: f32 = -3.4028235e38;

var<workgroup> qs: array<vec2<f32>, ROWS * KW>;
var<workgroup> ks: array<u32, BK * KW>;
var<workgroup> vs: array<u32, BK * KW>;
var<workgroup> ss: array<f32, ROWS * SW>;
// Rotating decode (attention_rope.wgsl): the step's own key and value words, for the slice that
// reaches its position.
var<workgroup> fresh_kv: array<vec2<u32>, HW>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let kv_head = wg.x;
    let group = P.heads / P.kv_heads;
    let rows = STEP.tokens * group;
    let first_row = wg.y * ROWS;
    if (first_row >= rows) {
        return;
    }
    let last_row = min(first_row + ROWS, rows) - 1u;
    var keys = block_keys(first_row, last_row, group);
    if (P.splits > 1u) {
        // Decode: one token, so every row sees the same keys.
        keys = slice_of(keys, wg.z, P.splits, SLICE);
    }

    let row = li / PER_ROW;
    let part = li % PER_ROW;
    let has_row = first_row + row < rows;
    let my_row = min(first_row + row, rows - 1u);
    let own = key_range(my_row / group);

    // An empty slice of decode's keys (past the step's position) only writes that it is empty.
    if (keys.y > keys.x) {
        for (var i = li; i < ROWS * HW; i += WG) {
            let r = i / HW;
            let w = i % HW;
            let q = q_offset(min(first_row + r, rows - 1u), kv_head, group);
            qs[r * KW + w] = query_word(q, w) * P.scale;
        }
    }
    // Rotating decode (attention_rope.wgsl): the slice that reaches the step's position takes
    // its key and value from the step, and the first block of each KV head stores them from its
    // first slice. Both conditions are the whole workgroup's.
    let fresh = ROTATES && keys.y > keys.x && keys.y - 1u == STEP.pos;
    let stores = ROTATES && wg.y == 0u && wg.z == 0u;
    if (fresh || stores) {
        for (var w = li; w < HW; w += WG) {
            let kv = vec2<u32>(new_key_word(kv_head, w), new_value_word(kv_head, w));
            fresh_kv[w] = kv;
            if (stores) {
                store_new(kv_head, w, kv.x, kv.y);
            }
        }
    }

    var m = MASKED;
    var l = 0.0;
    var acc: array<vec2<f32>, HW / PER_ROW>;
    for (var b = keys.x; b < keys.y; b += BK) {
        // The queries are staged, and every invocation is done with the last tile.
        workgroupBarrier();
        // The tile that reaches the step's position takes its key and value from fresh_kv
        // (and zeros past it); every other tile reads the cache. A condition the whole
        // workgroup shares.
        if (fresh && b + BK > STEP.pos) {
            for (var i = li; i < BK * HW; i += WG) {
                let key = i / HW;
                let w = i % HW;
                let t = b + key;
                var kv = vec2<u32>(0u);
                if (t == STEP.pos) {
                    kv = fresh_kv[w];
                } else if (t < STEP.pos) {
                    let word = cache_word(t, kv_head, w);
                    kv = vec2<u32>(K[word], V[word]);
                }
                ks[key * KW + w] = kv.x;
                vs[key * KW + w] = kv.y;
            }
        } else {
            for (var i = li; i < BK * HW; i += WG) {
                let key = i / HW;
                let w = i % HW;
                // Keys past the block's last are loaded from it and masked below.
                let word = cache_word(min(b + key, keys.y - 1u), kv_head, w);
                ks[key * KW + w] = K[word];
                vs[key * KW + w] = V[word];
            }
        }
        workgroupBarrier();
        var s: array<f32, BK / PER_ROW>;
        for (var w = 0u; w < HW; w++) {
            let q = qs[row * KW + w];
            for (var j = 0u; j < BK / PER_ROW; j++) {
                s[j] += dot(q, unpack2x16float(ks[(part + PER_ROW * j) * KW + w]));
            }
        }
        for (var j = 0u; j < BK / PER_ROW; j++) {
            let key = part + PER_ROW * j;
            let t = b + key;
            let seen = has_row && t >= own.x && t < own.y;
            ss[row * SW + key] = select(MASKED, s[j], seen);
        }
        workgroupBarrier();
        var m_new = m;
        for (var u = 0u; u < BK; u++) {
            m_new = max(m_new, ss[row * SW + u]);
        }
        let c = exp(m - m_new);
        l *= c;
        for (var i = 0u; i < HW / PER_ROW; i++) {
            acc[i] *= c;
        }
        for (var u = 0u; u < BK; u++) {
            let score = ss[row * SW + u];
            if (score > MASKED) {
                let p = exp(score - m_new);
                l += p;
                for (var i = 0u; i < HW / PER_ROW; i++) {
                    acc[i] += p * unpack2x16float(vs[u * KW + part + PER_ROW * i]);
                }
            }
        }
        m = m_new;
    }
    if (!has_row) {
        return;
    }
    if (P.splits > 1u) {
        // Token 0's row for head h: PART holds (token, head, slice) entries.
        let h = kv_head * group + my_row;
        let at = (h * P.splits + wg.z) * (HD + 2u);
        if (part == 0u) {
            PART[at] = m;
            PART[at + 1u] = l;
        }
        for (var i = 0u; i < HW / PER_ROW; i++) {
            let w = part + PER_ROW * i;
            PART[at + 2u + 2u * w] = acc[i].x;
            PART[at + 3u + 2u * w] = acc[i].y;
        }
        return;
    }
    let o = q_offset(my_row, kv_head, group);
    for (var i = 0u; i < HW / PER_ROW; i++) {
        let w = part + PER_ROW * i;
        O[o + 2u * w] = acc[i].x / l;
        O[o + 2u * w + 1u] = acc[i].y / l;
    }
}
