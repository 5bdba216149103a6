//! Every WGSL file parses and validates with naga, and is registered — no GPU needed.

use naga::valid::{Capabilities, ValidationFlags, Validator};

#[test]
fn every_wgsl_file_parses_and_validates() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 14, "{files:?}");
    for path in files {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let src = std::fs::read_to_string(&path).unwrap();
        let module = naga::front::wgsl::parse_str(&src)
            .unwrap_or_else(|e| panic!("{name}.wgsl: {}", e.emit_to_string(&src)));
        Validator::new(ValidationFlags::all(), Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}.wgsl: {}", e.emit_to_string(&src)));
        assert!(
            module.entry_points.iter().any(|ep| ep.name == name),
            "{name}.wgsl has no entry point `{name}`"
        );
        assert_eq!(
            attnlab_gpu::shaders::source(&name),
            src,
            "{name} is not the registered source"
        );
    }
}

/// The WGSL name of a member's type (the scalars our uniforms use), or its debug form.
fn wgsl_type(module: &naga::Module, ty: naga::Handle<naga::Type>) -> String {
    use naga::{ScalarKind, TypeInner};
    match &module.types[ty].inner {
        TypeInner::Scalar(s) => match (s.kind, s.width) {
            (ScalarKind::Uint, 4) => "u32".into(),
            (ScalarKind::Sint, 4) => "i32".into(),
            (ScalarKind::Float, 4) => "f32".into(),
            other => format!("{other:?}"),
        },
        other => format!("{other:?}"),
    }
}

#[test]
fn every_rust_params_has_its_wgsl_struct_layout() {
    use attnlab_gpu::params::ALL;
    // one layout per kernel, none missing, none extra
    let mut kernels: Vec<&str> = ALL.iter().map(|l| l.kernel).collect();
    let mut shaders: Vec<&str> = attnlab_gpu::shaders::ALL.iter().map(|(n, _)| *n).collect();
    kernels.sort();
    shaders.sort();
    assert_eq!(kernels, shaders);
    for l in ALL {
        let src = attnlab_gpu::shaders::source(l.kernel);
        let module = naga::front::wgsl::parse_str(src).unwrap();
        let (members, span) = module
            .types
            .iter()
            .find_map(|(_, t)| match (&t.name, &t.inner) {
                (Some(n), naga::TypeInner::Struct { members, span }) if n == "Params" => {
                    Some((members.clone(), *span))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}.wgsl has no struct Params", l.kernel));
        let wgsl: Vec<(String, usize, String)> = members
            .iter()
            .map(|m| {
                (
                    m.name.clone().unwrap_or_default(),
                    m.offset as usize,
                    wgsl_type(&module, m.ty),
                )
            })
            .collect();
        let rust: Vec<(String, usize, String)> = l
            .fields
            .iter()
            .map(|&(n, o, t)| (n.to_string(), o, t.to_string()))
            .collect();
        assert_eq!(
            rust, wgsl,
            "{}: Rust Params vs WGSL Params (name, offset, type)",
            l.kernel
        );
        assert_eq!(l.size, span as usize, "{}: size of Params", l.kernel);
        assert_eq!(
            l.size % 16,
            0,
            "{}: a uniform's size is a multiple of 16",
            l.kernel
        );
    }
}
