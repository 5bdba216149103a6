//! The one table of kernels: for each, its name (= its file in shaders/ and its entry point),
//! its WGSL, its storage bindings after the uniform (`true` = written), its uniform `Params`
//! layout and its workgroup size. The device compiles every entry (`context`);
//! `tests/shaders.rs` checks each entry against its WGSL with naga (entry point, bindings'
//! count, `Params` layout).
//!
//! The workgroup size lives in one place, the kernel module's `WG`: [`Kernel::source`] puts a
//! header in front of the WGSL (`const WG_X/WG_Y/WG_Z`, and the module's `CONSTS`), and every
//! shader says `@workgroup_size(WG_X, WG_Y, WG_Z)`. The module's `step` computes its grid
//! from the same `WG`.

pub use crate::kernel::Kernel;

macro_rules! table {
    ($($m:ident $(after $pre:ident)? $(like $like:ident)? $(with $consts:path)?),* $(,)?) => {
        /// Every kernel, in the order of a block.
        pub const ALL: &[Kernel] = &[$(Kernel {
            name: crate::$m::NAME,
            // `after f`: shaders/f.wgsl (functions only) goes in front of the kernel's file
            body: concat!(
                $(include_str!(concat!("../../../shaders/", stringify!($pre), ".wgsl")),)?
                include_str!(concat!("../../../shaders/", stringify!($m), ".wgsl"))
            ),
            // `like k`: the bindings and `Params` of kernel k
            writes: table!(@writes $m $($like)?),
            fields: table!(@fields $m $($like)?),
            params_size: table!(@size $m $($like)?),
            workgroup: crate::$m::WG,
            consts: table!(@consts $($consts)?),
        }),*];
    };
    (@writes $m:ident) => { crate::$m::WRITES };
    (@writes $m:ident $like:ident) => { crate::$like::WRITES };
    (@fields $m:ident) => { crate::$m::Params::FIELDS };
    (@fields $m:ident $like:ident) => { crate::$like::Params::FIELDS };
    (@size $m:ident) => { core::mem::size_of::<crate::$m::Params>() };
    (@size $m:ident $like:ident) => { core::mem::size_of::<crate::$like::Params>() };
    (@consts) => { &[] };
    (@consts $c:path) => { $c };
}

table!(
    embed,
    layernorm after layernorm_row,
    linear after activation,
    linear_rows after activation like linear with crate::linear_rows::CONSTS,
    split_heads,
    attn_scores,
    attn_softmax,
    attn_v,
    add_layernorm after layernorm_row,
    softmax_rows,
    pack_scores,
    // the Llama family's own operations
    qmatmul after dequant with crate::qmatmul::CONSTS,
    rms_norm,
    rope,
    swiglu,
    residual_add,
    gather_heads,
    qembed after dequant,
    // a forward that keeps no maps
    attn_fused with crate::attn_fused::CONSTS,
    // what the heads grid and the roles read of a forward that keeps no maps
    attn_pool with crate::attn_pool::CONSTS,
);

/// The kernel named `name`.
pub fn get(name: &str) -> &'static Kernel {
    ALL.iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no kernel named {name}"))
}

/// The WGSL source of kernel `name`, header included.
pub fn source(name: &str) -> String {
    get(name).source()
}
