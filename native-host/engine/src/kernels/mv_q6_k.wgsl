// Q6_K, 210-byte super-blocks (only 2-byte aligned): ql[128] (low 4 bits), qh[64] (high 2 bits),
// 16 signed 8-bit scales (one per 16 elements), d (f16) last. Each 128-element half h uses
// ql[64h..], qh[32h..] and scales[8h..]; its 32-element group k takes ql[l + 32(k & 1)]'s low
// (k < 2) or high nibble, bits 2k..2k+2 of qh[l], and scales 2k and 2k+1: value = d * sc * (q - 32).
fn part_dot(o: u32, p: u32) -> f32 {
    let b = o + (p / 8u) * 210u;
    let s = p % 8u;
    let h = s / 4u;
    let k = s % 4u;
    let ql = b + 64u * h + 32u * (k & 1u);
    let qh = b + 128u + 32u * h;
    let lo_shift = vec4<u32>(0u, 8u, 16u, 24u) + 4u * (k >> 1u);
    let hi_shift = vec4<u32>(0u, 8u, 16u, 24u) + 2u * k;
    let x = p * X_PART;
    var s0 = 0.0;
    var s1 = 0.0;
    for (var i = 0u; i < 8u; i++) {
        let lo = (vec4<u32>(ld32(ql + 4u * i)) >> lo_shift) & vec4<u32>(15u);
        let hi = (vec4<u32>(ld32(qh + 4u * i)) >> hi_shift) & vec4<u32>(3u);
        let v = dot(vec4<f32>(lo | (hi << vec4<u32>(4u))) - 32.0, X[x + i]);
        if (i < 4u) {
            s0 += v;
        } else {
            s1 += v;
        }
    }
    let sc = bitcast<vec2<i32>>(vec2<u32>(ld16(b + 192u + 8u * h + 2u * k)) << vec2<u32>(24u, 16u)) >> vec2<u32>(24u);
    let d = f16_lo(ld16(b + 208u));
    return d * (f32(sc.x) * s0 + f32(sc.y) * s1);
}

// The part's 32 values, for the matrix-matrix kernel.
fn part_load(o: u32, p: u32) -> array<vec4<f32>, 8> {
    let b = o + (p / 8u) * 210u;
    let s = p % 8u;
    let h = s / 4u;
    let k = s % 4u;
    let ql = b + 64u * h + 32u * (k & 1u);
    let qh = b + 128u + 32u * h;
    let lo_shift = vec4<u32>(0u, 8u, 16u, 24u) + 4u * (k >> 1u);
    let hi_shift = vec4<u32>(0u, 8u, 16u, 24u) + 2u * k;
    let sc = bitcast<vec2<i32>>(vec2<u32>(ld16(b + 192u + 8u * h + 2u * k)) << vec2<u32>(24u, 16u)) >> vec2<u32>(24u);
    let d = f16_lo(ld16(b + 208u));
    let d0 = d * f32(sc.x);
    let d1 = d * f32(sc.y);
    var r: array<vec4<f32>, 8>;
    for (var i = 0u; i < 8u; i++) {
        let lo = (vec4<u32>(ld32(ql + 4u * i)) >> lo_shift) & vec4<u32>(15u);
        let hi = (vec4<u32>(ld32(qh + 4u * i)) >> hi_shift) & vec4<u32>(3u);
        r[i] = select(d1, d0, i < 4u) * (vec4<f32>(lo | (hi << vec4<u32>(4u))) - 32.0);
    }
    return r;
}
