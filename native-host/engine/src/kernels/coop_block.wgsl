// Prefill's products on cooperative matrices (tensor cores): a workgroup of four subgroups, two
// by two, computes a block of BM tokens × BN weight rows of X·Wᵀ, each subgroup FM × FN
// fragments of F×F. Each step along the rows stages KS columns (PARTS 32-element parts) of the
// block's weights, dequantised by the type's `part_load` and rounded to f16, and of its tokens'
// activations, rounded to f16, in workgroup memory; the subgroups multiply their fragments from
// there and sum in f32. The sums then pass through workgroup memory a fragment of each subgroup
// at a time, to the kernel's own `put` (matmul_coop.wgsl, matmul_joined_coop.wgsl).
// The Rust side prepends F (8 or 16), SG (the subgroup size), WG = 4·SG, FM, FN, BM = 2·FM·F,
// BN = 2·FN·F, PARTS, KS = 32·PARTS and E = F·F / SG (sums an invocation puts per fragment),
// and writes coop_matFxF with the size.

// Each staged row is 8 halves (16 bytes) longer than its KS columns, so that the rows a fragment
// load reads together start in different banks of workgroup memory: at a stride of KS alone
// (a multiple of 128 bytes from 64 columns) they would all start in the same one.
const STRIDE: u32 = KS + 8u;

var<workgroup> xs: array<f16, BM * STRIDE>;
var<workgroup> ws: array<f16, BN * STRIDE>;
// One fragment of sums from each subgroup.
var<workgroup> stage: array<f32, 4u * F * F>;

// The largest f16: activations beyond it are clamped there rather than made infinite.
const F16_MAX: f32 = 65504.0;

// Rows first_row..first_row+BN of the matrix whose row 0 starts at row `base` of W (rows at or
// past `rows` repeat the last, their sums unused), for tokens t0..t0+BM, each sum handed to
// `put(round, e, token, row, sum)`, where `e` counts the sums this invocation puts (the same
// order in every call). Every invocation of the workgroup calls it (it has barriers); `sg` is
// the caller's subgroup.
fn block(base: u32, first_row: u32, rows: u32, t0: u32, sg: u32, li: u32, round: u32) {
    // The subgroup's first fragment: its token and row in the block.
    let fm = (sg / 2u) * FM * F;
    let fr = (sg % 2u) * FN * F;
    var c: array<coop_matFxF<f32, C>, FM * FN>;
    let parts = P.cols / 32u;
    let x_row = P.cols / 4u;
    for (var p0 = 0u; p0 < parts; p0 += PARTS) {
        // The fragments of the step before have been read.
        workgroupBarrier();
        for (var j = li; j < BN * PARTS; j += WG) {
            let r = j / PARTS;
            let q = j % PARTS;
            var w: array<vec4<f32>, 8>;
            if (p0 + q < parts) {
                w = part_load((base + min(first_row + r, rows - 1u)) * P.row_bytes, p0 + q);
            }
            let o = r * STRIDE + q * 32u;
            for (var i = 0u; i < 8u; i++) {
                let h = vec4<f16>(w[i]);
                ws[o + 4u * i] = h.x;
                ws[o + 4u * i + 1u] = h.y;
                ws[o + 4u * i + 2u] = h.z;
                ws[o + 4u * i + 3u] = h.w;
            }
        }
        for (var i = li; i < BM * KS / 4u; i += WG) {
            let t = i / (KS / 4u);
            let col = i % (KS / 4u);
            var v = vec4<f32>(0.0);
            if (p0 * 8u + col < parts * 8u) {
                v = clamp(X[(t0 + t) * x_row + p0 * 8u + col], vec4<f32>(-F16_MAX), vec4<f32>(F16_MAX));
            }
            let h = vec4<f16>(v);
            let x = t * STRIDE + 4u * col;
            xs[x] = h.x;
            xs[x + 1u] = h.y;
            xs[x + 2u] = h.z;
            xs[x + 3u] = h.w;
        }
        workgroupBarrier();
        for (var k = 0u; k < KS; k += F) {
            // A: tokens by columns, row-major; B: columns by weight rows, which is W's rows
            // read column-major.
            var b: array<coop_matFxF<f16, B>, FN>;
            for (var j = 0u; j < FN; j++) {
                b[j] = coopLoad<coop_matFxF<f16, B>>(&ws[(fr + j * F) * STRIDE + k], STRIDE);
            }
            for (var i = 0u; i < FM; i++) {
                let a = coopLoadT<coop_matFxF<f16, A>>(&xs[(fm + i * F) * STRIDE + k], STRIDE);
                for (var j = 0u; j < FN; j++) {
                    c[i * FN + j] = coopMultiplyAdd(a, b[j], c[i * FN + j]);
                }
            }
        }
    }
    for (var f = 0u; f < FM * FN; f++) {
        // The sums of the fragment before have been put.
        workgroupBarrier();
        coopStoreT(c[f], &stage[sg * F * F], F);
        workgroupBarrier();
        let i = f / FN;
        let j = f % FN;
        for (var n = 0u; n < E; n++) {
            let el = li + n * WG;
            let s = el / (F * F);
            let within = el % (F * F);
            let t = (s / 2u) * FM * F + i * F + within / F;
            let r = (s % 2u) * FN * F + j * F + within % F;
            put(round, f * E + n, t0 + t, first_row + r, stage[el]);
        }
    }
}
