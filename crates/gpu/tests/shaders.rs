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
