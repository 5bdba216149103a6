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

/// One kernel.
pub struct Kernel {
    pub name: &'static str,
    /// The WGSL after the header: the `after` file(s), then shaders/<name>.wgsl.
    pub body: &'static str,
    pub writes: &'static [bool],
    /// `Params`' fields: name, byte offset, type.
    pub fields: &'static [(&'static str, usize, &'static str)],
    /// `size_of::<Params>()`.
    pub params_size: usize,
    /// The workgroup size (`@workgroup_size(WG_X, WG_Y, WG_Z)` in the WGSL).
    pub workgroup: [u32; 3],
    /// More constants the WGSL reads from the header (e.g. `linear_rows`' ROWS).
    pub consts: &'static [(&'static str, u32)],
}

impl Kernel {
    /// The header the WGSL reads its workgroup size (and `consts`) from.
    pub fn header(&self) -> String {
        let [x, y, z] = self.workgroup;
        let mut h = format!(
            "// written by crates/gpu/src/kernels.rs from {}::WG\nconst WG_X: u32 = {x}u;\nconst WG_Y: u32 = {y}u;\nconst WG_Z: u32 = {z}u;\n",
            self.name
        );
        for (name, v) in self.consts {
            h.push_str(&format!("const {name}: u32 = {v}u;\n"));
        }
        h
    }

    /// The whole WGSL the device compiles: header, then `body`.
    pub fn source(&self) -> String {
        self.header() + self.body
    }
}

macro_rules! table {
    ($($m:ident $(after $pre:ident)? $(with $consts:path)?),* $(,)?) => {
        /// Every kernel, in the order of a block.
        pub const ALL: &[Kernel] = &[$(Kernel {
            name: crate::$m::NAME,
            // `after f`: shaders/f.wgsl (functions only) goes in front of the kernel's file
            body: concat!(
                $(include_str!(concat!("../../../shaders/", stringify!($pre), ".wgsl")),)?
                include_str!(concat!("../../../shaders/", stringify!($m), ".wgsl"))
            ),
            writes: crate::$m::WRITES,
            fields: crate::$m::Params::FIELDS,
            params_size: core::mem::size_of::<crate::$m::Params>(),
            workgroup: crate::$m::WG,
            consts: table!(@consts $($consts)?),
        }),*];
    };
    (@consts) => { &[] };
    (@consts $c:path) => { $c };
}

table!(
    embed,
    layernorm after row_sum,
    linear after activation,
    linear_rows after activation with crate::linear_rows::CONSTS,
    split_heads,
    attn_scores,
    attn_softmax,
    attn_v,
    add_layernorm after row_sum,
    softmax_rows,
    pack_scores,
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
