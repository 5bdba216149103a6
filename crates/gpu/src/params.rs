//! Each kernel's uniform `Params`: the Rust struct and, beside it, its layout as the WGSL
//! struct of the same name must have it (field names, byte offsets, scalar types, size).
//! `kernels::ALL` carries each layout; `tests/shaders.rs` checks every one against its shader
//! with naga's reflection.

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
