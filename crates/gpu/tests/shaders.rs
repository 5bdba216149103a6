//! Every WGSL file parses and validates with naga and is a kernel of the table, with the
//! table's bindings and `Params` layout — no GPU needed.

use naga::valid::{Capabilities, ValidationFlags, Validator};

#[test]
fn every_wgsl_file_parses_and_validates() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    // a file without `@compute` holds functions that kernels put in front of their own
    // (kernels.rs, `after`): it validates alone and is the start of some kernel's source
    let (functions, kernels): (Vec<_>, Vec<_>) = files
        .into_iter()
        .partition(|p| !std::fs::read_to_string(p).unwrap().contains("@compute"));
    for path in &functions {
        let src = std::fs::read_to_string(path).unwrap();
        // it may read the header's constants: it validates inside each kernel below
        assert!(
            attnlab_gpu::kernels::ALL
                .iter()
                .any(|k| k.body.starts_with(&src)),
            "{} is used by no kernel",
            path.display()
        );
    }
    // every kernel has its file, and every file with an entry point is a kernel
    assert_eq!(
        kernels.len(),
        attnlab_gpu::kernels::ALL.len(),
        "{kernels:?}"
    );
    for path in kernels {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let k = attnlab_gpu::kernels::get(&name);
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(
            k.body.ends_with(&file),
            "{name} is not the registered source"
        );
        // the workgroup size is the header's, written from the module's WG: no number in the
        // file itself
        assert!(
            file.contains("@workgroup_size(WG_X, WG_Y, WG_Z)"),
            "{name}.wgsl: @workgroup_size must read the header's WG_X, WG_Y, WG_Z"
        );
        let src = &k.source();
        let module = naga::front::wgsl::parse_str(src)
            .unwrap_or_else(|e| panic!("{name}.wgsl: {}", e.emit_to_string(src)));
        Validator::new(ValidationFlags::all(), Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{name}.wgsl: {}", e.emit_to_string(src)));
        let ep = module
            .entry_points
            .iter()
            .find(|ep| ep.name == name)
            .unwrap_or_else(|| panic!("{name}.wgsl has no entry point `{name}`"));
        assert_eq!(
            ep.workgroup_size, k.workgroup,
            "{name}: the workgroup size the grid divides by"
        );
        // the bindings: the uniform at 0, then one storage buffer per `writes` entry, read-only
        // exactly where it is not written
        let mut bound: Vec<(u32, Option<bool>)> = module
            .global_variables
            .iter()
            .filter_map(|(_, g)| {
                let b = g.binding.as_ref()?;
                let written = match g.space {
                    naga::AddressSpace::Storage { access } => {
                        Some(access.contains(naga::StorageAccess::STORE))
                    }
                    _ => None,
                };
                Some((b.binding, written))
            })
            .collect();
        bound.sort();
        let mut want = vec![(0, None)];
        want.extend(
            k.writes
                .iter()
                .enumerate()
                .map(|(i, &w)| (i as u32 + 1, Some(w))),
        );
        assert_eq!(bound, want, "{name}: bindings (number, written)");
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
    for l in attnlab_gpu::kernels::ALL {
        let src = &l.source();
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
            .unwrap_or_else(|| panic!("{}.wgsl has no struct Params", l.name));
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
            l.name
        );
        assert_eq!(l.params_size, span as usize, "{}: size of Params", l.name);
        assert_eq!(
            l.params_size % 16,
            0,
            "{}: a uniform's size is a multiple of 16",
            l.name
        );
    }
}
