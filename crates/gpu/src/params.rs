//! Each kernel's uniform `Params`: the Rust struct and, beside it, its layout as the WGSL
//! struct of the same name must have it (field names, byte offsets, scalar types, size).
//! `tests/shaders.rs` checks every one against its shader with naga's reflection.

/// Declares a kernel's `Params` (`#[repr(C)]`, `Pod`) with `Params::FIELDS`: each field's
/// name, byte offset and type, as written.
#[macro_export]
macro_rules! params {
    ($(#[$m:meta])* pub struct Params { $(pub $f:ident : $t:ident),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct Params {
            $(pub $f: $t),*
        }

        impl Params {
            /// Every field: name, byte offset, type (checked against the WGSL `Params`).
            pub const FIELDS: &'static [(&'static str, usize, &'static str)] =
                &[$((stringify!($f), core::mem::offset_of!(Params, $f), stringify!($t))),*];
        }
    };
}

/// One kernel's uniform: its name (= its WGSL file and entry point), fields and size.
pub struct Layout {
    pub kernel: &'static str,
    pub fields: &'static [(&'static str, usize, &'static str)],
    pub size: usize,
}

macro_rules! layouts {
    ($($m:ident),* $(,)?) => {
        /// Every kernel's `Params`, one entry per WGSL file.
        pub const ALL: &[Layout] = &[$(Layout {
            kernel: crate::$m::NAME,
            fields: crate::$m::Params::FIELDS,
            size: core::mem::size_of::<crate::$m::Params>(),
        }),*];
    };
}

layouts!(
    embed,
    linear,
    linear_rows,
    split_heads,
    qk_scores,
    scale_scores,
    causal_mask,
    softmax_rows,
    attn_v,
    ablate_heads,
    concat_heads,
    residual_add,
    layernorm,
    gelu,
    pack_heads,
);
