//! WGSL sources, assembled from the files in `src/kernels/`.
//!
//! WGSL has no includes and naga's pipeline-overridable constants cannot size workgroup arrays, so
//! a kernel is its files joined behind a header of constants.

use crate::tensor_type::TensorType;

use super::coop_shape::CoopShape;
use super::matvec_config::{MatVecConfig, Reduction};

const MATVEC: &str = include_str!("../kernels/matvec.wgsl");
const MATVEC_X_SLICES: &str = include_str!("../kernels/matvec_x_slices.wgsl");
const MATVEC_NORMED: &str = include_str!("../kernels/matvec_normed.wgsl");
const MATMUL: &str = include_str!("../kernels/matmul.wgsl");
const MATMUL_JOINED: &str = include_str!("../kernels/matmul_joined.wgsl");
const MATMUL_COOP: &str = include_str!("../kernels/matmul_coop.wgsl");
const MATMUL_JOINED_COOP: &str = include_str!("../kernels/matmul_joined_coop.wgsl");
const COOP_BLOCK: &str = include_str!("../kernels/coop_block.wgsl");
const MATMUL_BINDINGS: &str = include_str!("../kernels/matmul_bindings.wgsl");
const MATMUL_JOINED_BINDINGS: &str = include_str!("../kernels/matmul_joined_bindings.wgsl");
const MATMUL_TILE: &str = include_str!("../kernels/matmul_tile.wgsl");
const GATED_ACT: &str = include_str!("../kernels/gated_act.wgsl");
const MATMUL_X_PLAIN: &str = include_str!("../kernels/matmul_x_plain.wgsl");
const MATMUL_X_SUBGROUP: &str = include_str!("../kernels/matmul_x_subgroup.wgsl");
const WEIGHT_WORDS: &str = include_str!("../kernels/weight_words.wgsl");
const KSCALES: &str = include_str!("../kernels/kscales.wgsl");
const REDUCE_NONE: &str = include_str!("../kernels/reduce_none.wgsl");
const REDUCE_WORKGROUP: &str = include_str!("../kernels/reduce_workgroup.wgsl");
const REDUCE_SUBGROUP: &str = include_str!("../kernels/reduce_subgroup.wgsl");

const WORKGROUP_REDUCE: &str = include_str!("../kernels/workgroup_reduce.wgsl");

const STEP: &str = include_str!("../kernels/step.wgsl");

/// Where a type's `part_dot` finds part p of x: at vec4 `p * X_PART` of `X`. In a storage
/// binding the parts are packed.
const X_STORAGE: &str = "const X_PART: u32 = 8u;\n";
/// In workgroup memory a part is followed by one unused vec4 (see `matvec_normed.wgsl`).
const X_PART_PADDED: u32 = 9;

/// The workgroup memory x of `cols` floats (a multiple of 32) takes, staged with its padding.
pub(super) fn staged_x_bytes(cols: u32) -> u32 {
    cols / 32 * X_PART_PADDED * 16
}

/// A kernel that reads the step uniform, joined to its `Step` struct.
pub(super) fn with_step(kernel: &str) -> String {
    format!("{STEP}\n{kernel}")
}

/// A kernel that reduces a row within one workgroup, joined to the shared `reduce`.
pub(super) fn with_workgroup_reduce(kernel: &str) -> String {
    format!("{kernel}\n{WORKGROUP_REDUCE}")
}

/// The `part_dot` and `part_load` of a weight type, and whether they need the k-quant scale
/// decoder.
fn part_dot(ty: TensorType) -> (&'static str, bool) {
    match ty {
        TensorType::F32 => (include_str!("../kernels/mv_f32.wgsl"), false),
        TensorType::F16 => (include_str!("../kernels/mv_f16.wgsl"), false),
        TensorType::BF16 => (include_str!("../kernels/mv_bf16.wgsl"), false),
        TensorType::Q8_0 => (include_str!("../kernels/mv_q8_0.wgsl"), false),
        TensorType::Q4_0 => (include_str!("../kernels/mv_q4_0.wgsl"), false),
        TensorType::Q4_1 => (include_str!("../kernels/mv_q4_1.wgsl"), false),
        TensorType::Q5_0 => (include_str!("../kernels/mv_q5_0.wgsl"), false),
        TensorType::Q5_1 => (include_str!("../kernels/mv_q5_1.wgsl"), false),
        TensorType::Q4_K => (include_str!("../kernels/mv_q4_k.wgsl"), true),
        TensorType::Q5_K => (include_str!("../kernels/mv_q5_k.wgsl"), true),
        TensorType::Q6_K => (include_str!("../kernels/mv_q6_k.wgsl"), true),
    }
}

/// The matrix-vector kernel for weights of type `ty`, with x staged in workgroup memory for
/// rows of up to `x_staged` columns (0: read from its storage binding).
pub(super) fn matvec(ty: TensorType, config: &MatVecConfig, x_staged: u32) -> String {
    let header = format!(
        "// {ty} matrix-vector, {config:?}, x staged for {x_staged} columns\n\
         const WG: u32 = {}u;\nconst TPR: u32 = {}u;\n",
        config.workgroup_size, config.threads_per_row
    );
    let main = if x_staged == 0 {
        MATVEC
            .replace(
                "// X\n",
                "@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;\n",
            )
            .replace("    // STAGE X\n", "")
    } else {
        MATVEC
            .replace(
                "// X\n",
                &format!(
                    "@group(0) @binding(1) var<storage, read> XIN: array<vec4<f32>>;\n\
                     var<workgroup> X: array<vec4<f32>, {}u>;\n",
                    x_staged / 32 * X_PART_PADDED
                ),
            )
            .replace(
                "    // STAGE X\n",
                "    for (var i = li; i < P.cols / 4u; i += WG) {\n        \
                 X[i / 8u * X_PART + i % 8u] = XIN[i];\n    }\n    workgroupBarrier();\n",
            )
    };
    let x_part = if x_staged == 0 {
        X_STORAGE.to_owned()
    } else {
        format!("const X_PART: u32 = {X_PART_PADDED}u;\n")
    };
    with_part_dot(header + &x_part + "\n", &main, ty, config)
}

/// The matrix-vector kernel whose x is decode's attention slices, merged as each workgroup
/// stages them (matvec_x_slices.wgsl): rows of `cols` columns, at most `heads` query heads in at
/// most `max_splits` slices. The step uniform and the key ranges are the caller's to join.
pub(super) fn matvec_merging(
    ty: TensorType,
    config: &MatVecConfig,
    cols: u32,
    heads: u32,
    max_splits: u32,
) -> String {
    let header = format!(
        "// {ty} matrix-vector merging attention's slices, {config:?}\nconst WG: u32 = {}u;\n\
         const TPR: u32 = {}u;\nconst X_PART: u32 = {X_PART_PADDED}u;\nconst X_VEC4S: u32 = {}u;\n\
         const HEADS: u32 = {heads}u;\nconst MAX_SPLITS: u32 = {max_splits}u;\n\n",
        config.workgroup_size,
        config.threads_per_row,
        cols / 32 * X_PART_PADDED
    );
    let main = MATVEC
        .replace("// X\n", MATVEC_X_SLICES)
        .replace("    // STAGE X\n", "    stage_x(li);\n");
    with_part_dot(header, &main, ty, config)
}

/// The workgroup memory of [`matvec_merging`]'s kernel: x staged, each (head, slice)'s weight
/// and each head's sum.
pub(super) fn merging_bytes(cols: u32, heads: u32, max_splits: u32) -> u32 {
    staged_x_bytes(cols) + heads * max_splits * 4 + heads * 4
}

/// The matrix-vector kernel with the RMSNorm of its `dim`-long x folded in
/// (matvec_normed.wgsl): split over outputs, or `gated` with activation `act` (0: SiLU, 1: GELU).
pub(super) fn matvec_normed(
    ty: TensorType,
    config: &MatVecConfig,
    dim: u32,
    gated: bool,
    act: u32,
) -> String {
    let header = format!(
        "// {ty} normed matrix-vector, {config:?}\nconst WG: u32 = {}u;\nconst TPR: u32 = {}u;\n\
         const DIM4: u32 = {}u;\nconst GATED: bool = {gated};\nconst ACT: u32 = {act}u;\n\
         const X_PART: u32 = {X_PART_PADDED}u;\n\n{GATED_ACT}\n",
        config.workgroup_size,
        config.threads_per_row,
        dim / 4
    );
    with_part_dot(header, MATVEC_NORMED, ty, config)
}

/// `header` and a matrix-vector `main`, joined to the weight words, `ty`'s `part_dot` and the
/// row reduction of `config`.
fn with_part_dot(mut src: String, main: &str, ty: TensorType, config: &MatVecConfig) -> String {
    let (part, kscales) = part_dot(ty);
    let reduce = match config.reduction {
        _ if config.threads_per_row == 1 => REDUCE_NONE,
        Reduction::Workgroup => REDUCE_WORKGROUP,
        Reduction::Subgroup => REDUCE_SUBGROUP,
    };
    for piece in [
        main,
        WEIGHT_WORDS,
        if kscales { KSCALES } else { "" },
        part,
        reduce,
    ] {
        src.push_str(piece);
        src.push('\n');
    }
    src
}

/// The matrix-matrix kernel for weights of type `ty`, in workgroups of `workgroup_size` rows,
/// tiles of `tile` (1, 2, 4 or 8) tokens; `subgroup_x` shares the loads of X across subgroup lanes.
pub(super) fn matmul(ty: TensorType, workgroup_size: u32, tile: u32, subgroup_x: bool) -> String {
    let header = format!("// {ty} matrix-matrix\nconst WG: u32 = {workgroup_size}u;\nconst TT: u32 = {tile}u;\n{X_STORAGE}\n{STEP}\n{MATMUL_BINDINGS}\n");
    with_part_load(header, MATMUL, ty, subgroup_x)
}

/// The matrix-matrix kernel over joined matrices (matmul_joined.wgsl): split over outputs, or
/// `gated` with activation `act` (0: SiLU, 1: GELU).
pub(super) fn matmul_joined(
    ty: TensorType,
    workgroup_size: u32,
    tile: u32,
    subgroup_x: bool,
    gated: bool,
    act: u32,
) -> String {
    let header = format!(
        "// {ty} joined matrix-matrix\nconst WG: u32 = {workgroup_size}u;\nconst TT: u32 = {tile}u;\n\
         const GATED: bool = {gated};\nconst ACT: u32 = {act}u;\n{X_STORAGE}\n{STEP}\n{GATED_ACT}\n\
         {MATMUL_JOINED_BINDINGS}\n"
    );
    with_part_load(header, MATMUL_JOINED, ty, subgroup_x)
}

/// `header` and a matrix-matrix `main`, joined to `tile_sums`, the loads of X, the weight words
/// and `ty`'s `part_load`.
fn with_part_load(mut src: String, main: &str, ty: TensorType, subgroup_x: bool) -> String {
    let (part, kscales) = part_dot(ty);
    let (main, x) = if subgroup_x {
        (
            main.replace("// LANE", "@builtin(subgroup_invocation_id) lane: u32,"),
            MATMUL_X_SUBGROUP,
        )
    } else {
        (main.to_owned(), MATMUL_X_PLAIN)
    };
    for piece in [
        &main[..],
        MATMUL_TILE,
        x,
        WEIGHT_WORDS,
        if kscales { KSCALES } else { "" },
        part,
    ] {
        src.push_str(piece);
        src.push('\n');
    }
    src
}

/// The matrix-matrix kernel on cooperative matrices in blocks of `shape`, for weights of type
/// `ty` and subgroups of `subgroup` lanes (see `coop_block.wgsl`).
pub(super) fn matmul_coop(ty: TensorType, shape: CoopShape, subgroup: u32) -> String {
    let header = format!(
        "// {ty} matrix-matrix, {shape}\n{}{X_STORAGE}\n{STEP}\n{MATMUL_BINDINGS}\n",
        shape.wgsl_constants(subgroup)
    );
    with_coop_block(header, MATMUL_COOP, ty, shape.fragment)
}

/// The joined matrix-matrix kernel on cooperative matrices: split over outputs, or `gated`
/// with activation `act` (0: SiLU, 1: GELU).
pub(super) fn matmul_joined_coop(
    ty: TensorType,
    shape: CoopShape,
    subgroup: u32,
    gated: bool,
    act: u32,
) -> String {
    let header = format!(
        "// {ty} joined matrix-matrix, {shape}\n{}const GATED: bool = {gated};\n\
         const ACT: u32 = {act}u;\n{X_STORAGE}\n{STEP}\n{GATED_ACT}\n{MATMUL_JOINED_BINDINGS}\n",
        shape.wgsl_constants(subgroup)
    );
    with_coop_block(header, MATMUL_JOINED_COOP, ty, shape.fragment)
}

/// `header` and a cooperative matrix-matrix `main`, joined to the block they share, the weight
/// words and `ty`'s `part_load`, with the matrix type named for `fragment`.
fn with_coop_block(mut src: String, main: &str, ty: TensorType, fragment: u32) -> String {
    let (part, kscales) = part_dot(ty);
    for piece in [
        main,
        COOP_BLOCK,
        WEIGHT_WORDS,
        if kscales { KSCALES } else { "" },
        part,
    ] {
        src.push_str(piece);
        src.push('\n');
    }
    src.replace("coop_matFxF", &format!("coop_mat{fragment}x{fragment}"))
}
