//! What a kernel is, for the device that compiles it: its name (= its file in shaders/ and
//! its entry point), its WGSL, its storage bindings, its uniform `Params` layout and its
//! workgroup size. The table of every kernel is `kernels::ALL`.

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
