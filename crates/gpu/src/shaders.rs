//! Every WGSL kernel's source, loaded from `shaders/` at compile time.

/// (entry point = file name, source)
pub const ALL: &[(&str, &str)] = &[
    ("embed", include_str!("../../../shaders/embed.wgsl")),
    ("linear", include_str!("../../../shaders/linear.wgsl")),
    (
        "linear_rows",
        include_str!("../../../shaders/linear_rows.wgsl"),
    ),
    (
        "split_heads",
        include_str!("../../../shaders/split_heads.wgsl"),
    ),
    ("qk_scores", include_str!("../../../shaders/qk_scores.wgsl")),
    (
        "scale_scores",
        include_str!("../../../shaders/scale_scores.wgsl"),
    ),
    (
        "causal_mask",
        include_str!("../../../shaders/causal_mask.wgsl"),
    ),
    (
        "softmax_rows",
        include_str!("../../../shaders/softmax_rows.wgsl"),
    ),
    ("attn_v", include_str!("../../../shaders/attn_v.wgsl")),
    (
        "ablate_heads",
        include_str!("../../../shaders/ablate_heads.wgsl"),
    ),
    (
        "concat_heads",
        include_str!("../../../shaders/concat_heads.wgsl"),
    ),
    (
        "residual_add",
        include_str!("../../../shaders/residual_add.wgsl"),
    ),
    ("layernorm", include_str!("../../../shaders/layernorm.wgsl")),
    ("gelu", include_str!("../../../shaders/gelu.wgsl")),
    (
        "pack_heads",
        include_str!("../../../shaders/pack_heads.wgsl"),
    ),
];

/// The source of kernel `name`.
pub fn source(name: &str) -> &'static str {
    ALL.iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| panic!("no shader named {name}"))
}
