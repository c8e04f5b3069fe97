// RoPE in place on one buffer of `tokens` × `heads` × `head_dim` values (rope_angle.wgsl says
// what is rotated and how).

@group(0) @binding(0) var<storage, read_write> X: array<f32>;
@group(0) @binding(1) var<storage, read> FREQ_FACTORS: array<f32>;
@group(0) @binding(2) var<uniform> STEP: Step;
@group(0) @binding(3) var<uniform> P: RopeParams;

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let half = P.n_dims / 2u;
    let idx = gid.x + gid.y * nwg.x * WG;
    if (idx >= P.tokens * P.heads * half) {
        return;
    }
    let i = idx % half;
    let row = idx / half;          // token * heads + head
    let cs = rotation(P, i, STEP.pos + row / P.heads);
    let ab = row * P.head_dim + pair(P, i);
    let x0 = X[ab.x];
    let x1 = X[ab.y];
    X[ab.x] = x0 * cs.x - x1 * cs.y;
    X[ab.y] = x0 * cs.y + x1 * cs.x;
}
