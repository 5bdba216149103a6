//! The one table of kernels: for each, its name (= its file in shaders/ and its entry point),
//! its WGSL source, its storage bindings after the uniform (`true` = written), its uniform
//! `Params` layout and its workgroup size. The device compiles every entry (`context`); `tests/shaders.rs` checks
//! each entry against its WGSL with naga (entry point, bindings' count, `Params` layout).

/// One kernel.
pub struct Kernel {
    pub name: &'static str,
    pub source: &'static str,
    pub writes: &'static [bool],
    /// `Params`' fields: name, byte offset, type.
    pub fields: &'static [(&'static str, usize, &'static str)],
    /// `size_of::<Params>()`.
    pub params_size: usize,
    /// The WGSL's `@workgroup_size`.
    pub workgroup: [u32; 3],
}

macro_rules! table {
    ($($m:ident $(after $pre:ident)?),* $(,)?) => {
        /// Every kernel, in the order of a block.
        pub const ALL: &[Kernel] = &[$(Kernel {
            name: crate::$m::NAME,
            // `after f`: shaders/f.wgsl (functions only) goes in front of the kernel's file
            source: concat!(
                $(include_str!(concat!("../../../shaders/", stringify!($pre), ".wgsl")),)?
                include_str!(concat!("../../../shaders/", stringify!($m), ".wgsl"))
            ),
            writes: crate::$m::WRITES,
            fields: crate::$m::Params::FIELDS,
            params_size: core::mem::size_of::<crate::$m::Params>(),
            workgroup: crate::$m::WG,
        }),*];
    };
}

table!(
    embed,
    layernorm after row_sum,
    linear after activation,
    linear_rows after activation,
    split_heads,
    attn_scores,
    softmax_rows,
    attn_v,
    add_layernorm after row_sum,
    pack_scores,
);

/// The kernel named `name`.
pub fn get(name: &str) -> &'static Kernel {
    ALL.iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"))
}

/// The WGSL source of kernel `name`.
pub fn source(name: &str) -> &'static str {
    get(name).source
}
