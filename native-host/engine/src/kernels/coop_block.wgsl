// Prefill's products on cooperative matrices (tensor cores): a workgroup of four subgroups
// computes a block of BM tokens × BN weight rows of X·Wᵀ. Each step along the rows stages KS
// columns (PARTS 32-element parts) of the block's weights, dequantised by the type's `part_load`
// and rounded to f16, and of its tokens' activations, rounded to f16, in workgroup memory; each
// subgroup multiplies its 2×2 fragments of F×F from there and sums in f32. The block ends in
// `stage`, token by row, for the kernel's own ending to write (matmul_coop.wgsl,
// matmul_joined_coop.wgsl).
// The Rust side prepends F (8 or 16), SG (the subgroup size, a multiple of F), WG = 4·SG,
// BM = BN = 4·F, PARTS, KS = 32·PARTS and E = BM·BN / WG, and writes coop_matFxF with the size.

var<workgroup> xs: array<f16, BM * KS>;
var<workgroup> ws: array<f16, BN * KS>;
var<workgroup> stage: array<f32, BM * BN>;

// The largest f16: activations beyond it are clamped there rather than made infinite.
const F16_MAX: f32 = 65504.0;

// Rows first_row..first_row+BN of the matrix whose row 0 starts at row `base` of W (rows at or
// past `rows` repeat the last, their sums unused), for tokens t0..t0+BM, into `stage`. Every
// invocation of the workgroup calls it (it has barriers); `sg` is the caller's subgroup.
fn block(base: u32, first_row: u32, rows: u32, t0: u32, sg: u32, li: u32) {
    let fm = (sg / 2u) * 2u * F;
    let fr = (sg % 2u) * 2u * F;
    var c00 = coop_matFxF<f32, C>();
    var c01 = coop_matFxF<f32, C>();
    var c10 = coop_matFxF<f32, C>();
    var c11 = coop_matFxF<f32, C>();
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
            let o = r * KS + q * 32u;
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
            let c = i % (KS / 4u);
            var v = vec4<f32>(0.0);
            if (p0 * 8u + c < parts * 8u) {
                v = clamp(X[(t0 + t) * x_row + p0 * 8u + c], vec4<f32>(-F16_MAX), vec4<f32>(F16_MAX));
            }
            let h = vec4<f16>(v);
            let x = t * KS + 4u * c;
            xs[x] = h.x;
            xs[x + 1u] = h.y;
            xs[x + 2u] = h.z;
            xs[x + 3u] = h.w;
        }
        workgroupBarrier();
        for (var k = 0u; k < KS; k += F) {
            // A: tokens by columns, row-major; B: columns by weight rows, which is W's rows
            // read column-major.
            let a0 = coopLoadT<coop_matFxF<f16, A>>(&xs[fm * KS + k], KS);
            let a1 = coopLoadT<coop_matFxF<f16, A>>(&xs[(fm + F) * KS + k], KS);
            let b0 = coopLoad<coop_matFxF<f16, B>>(&ws[fr * KS + k], KS);
            let b1 = coopLoad<coop_matFxF<f16, B>>(&ws[(fr + F) * KS + k], KS);
            c00 = coopMultiplyAdd(a0, b0, c00);
            c01 = coopMultiplyAdd(a0, b1, c01);
            c10 = coopMultiplyAdd(a1, b0, c10);
            c11 = coopMultiplyAdd(a1, b1, c11);
        }
    }
    // The ending of the block before has read `stage`.
    workgroupBarrier();
    coopStoreT(c00, &stage[fm * BN + fr], BN);
    coopStoreT(c01, &stage[fm * BN + fr + F], BN);
    coopStoreT(c10, &stage[(fm + F) * BN + fr], BN);
    coopStoreT(c11, &stage[(fm + F) * BN + fr + F], BN);
    workgroupBarrier();
}
