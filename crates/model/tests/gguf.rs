//! The GGUF reader against gguf-py (llama.cpp's own Python package): `tests/data/quants.gguf`
//! was written by `tools/gguf/make_fixtures.py` with metadata of every value type and, for each
//! tensor type attnlab reads, random blocks (`q.<TYPE>`) beside gguf-py's dequantization of
//! them (`want.<TYPE>`). Every value must equal gguf-py's to the bit.

use attnlab_model::gguf::{GgmlType, Gguf, Value};
use attnlab_model::Error;

fn fixture() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quants.gguf"
    ))
    .unwrap()
}

#[test]
fn every_metadata_type_reads_as_gguf_py_wrote_it() {
    let bytes = fixture();
    let g = Gguf::parse(&bytes).unwrap();
    assert_eq!(g.version, 3);
    let v = |k: &str| g.get(&format!("fixture.{k}")).unwrap().clone();
    assert_eq!(v("u8"), Value::U8(200));
    assert_eq!(v("i8"), Value::I8(-100));
    assert_eq!(v("u16"), Value::U16(60000));
    assert_eq!(v("i16"), Value::I16(-30000));
    assert_eq!(v("u32"), Value::U32(4_000_000_000));
    assert_eq!(v("i32"), Value::I32(-2_000_000_000));
    assert_eq!(v("f32"), Value::F32(0.1));
    assert_eq!(v("bool"), Value::Bool(true));
    assert_eq!(
        v("string").as_str(),
        Some("나는 어제 산 커피를 오늘 마셨다")
    );
    assert_eq!(v("u64"), Value::U64(18_000_000_000_000_000_000));
    assert_eq!(v("i64"), Value::I64(-9_000_000_000_000_000_000));
    assert_eq!(v("f64"), Value::F64(1e-300));
    let strings = v("strings");
    let strings: Vec<&str> = strings
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(strings, ["<|im_start|>", "Ġthe", "커피"]);
    assert_eq!(
        v("ints"),
        Value::Array(vec![Value::I32(1), Value::I32(-2), Value::I32(3)])
    );
    assert_eq!(
        v("nested"),
        Value::Array(vec![
            Value::Array(vec![Value::I32(1), Value::I32(2)]),
            Value::Array(vec![Value::I32(3)])
        ])
    );
    assert_eq!(v("u32").as_u64(), Some(4_000_000_000));
    assert_eq!(v("i8").as_u64(), None, "a negative count is no count");
    assert_eq!(
        g.get("general.architecture").and_then(Value::as_str),
        Some("attnlab-fixture")
    );
}

#[test]
fn every_read_type_dequantizes_to_gguf_pys_values_bit_for_bit() {
    let bytes = fixture();
    let g = Gguf::parse(&bytes).unwrap();
    for ty in GgmlType::READ {
        let name = ty.name();
        let q = g
            .tensor(&format!("q.{name}"))
            .unwrap_or_else(|| panic!("q.{name}"));
        let want = g.tensor(&format!("want.{name}")).unwrap();
        assert_eq!(q.ty, ty);
        assert_eq!(q.shape, want.shape, "{name}: row-major shapes");
        assert_eq!(
            q.shape[0], 2,
            "{name}: two rows (the file lists the row length first)"
        );
        let (got, want) = (g.read(&bytes, q).unwrap(), g.read(&bytes, want).unwrap());
        assert!(
            want.iter().any(|&x| x != 0.0),
            "{name}: a fixture of zeros proves nothing"
        );
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                a.to_bits(),
                b.to_bits(),
                "{name} element {i}: {a} vs gguf-py's {b}"
            );
        }
    }
}

#[test]
fn a_type_not_read_is_refused_by_its_name() {
    let bytes = fixture();
    let g = Gguf::parse(&bytes).unwrap();
    let t = g.tensor("q.Q2_K").unwrap();
    let e = g.read(&bytes, t).unwrap_err().to_string();
    assert!(e.contains("`q.Q2_K` is Q2_K") && e.contains("Q6_K"), "{e}");
}

#[test]
fn a_cut_or_damaged_file_is_an_error_never_a_panic() {
    let bytes = fixture();
    let g = Gguf::parse(&bytes).unwrap();
    let data_start = g.tensors.iter().map(|t| t.start).min().unwrap();
    let data_end = g.tensors.iter().map(|t| t.start + t.len).max().unwrap();
    // every cut through the header, the metadata and the directory, and a few through the data
    for n in (0..data_start).chain([data_start + 1, data_end - 1]) {
        match Gguf::parse(&bytes[..n]) {
            Err(Error::Gguf(_)) => {}
            other => panic!("cut at {n}: {other:?}"),
        }
    }
    // every byte of the header and directory set to 0xFF in turn: parsed or refused, no panic
    for i in 0..data_start {
        let mut b = bytes.clone();
        b[i] = 0xFF;
        if let Ok(g) = Gguf::parse(&b) {
            for t in &g.tensors {
                let _ = g.read(&b, t);
            }
        }
    }
    let mut be = bytes.clone();
    be[4..8].copy_from_slice(&3u32.to_be_bytes());
    assert!(Gguf::parse(&be)
        .unwrap_err()
        .to_string()
        .contains("big-endian"));
    assert!(Gguf::parse(b"GGML\x03\0\0\0")
        .unwrap_err()
        .to_string()
        .contains("not a GGUF file"));
}

#[test]
fn a_tokenizer_llama_cpp_splits_otherwise_is_refused_by_name() {
    // the fixture of every metadata type has no tokenizer at all
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/quants.gguf"
    ))
    .unwrap();
    let g = Gguf::parse(&bytes).unwrap();
    let e = attnlab_model::gguf::tokenizer::tokenizer_json(&g)
        .unwrap_err()
        .to_string();
    assert!(e.contains("tokenizer.ggml.model is missing"), "{e}");
    let mut g = g;
    g.metadata
        .insert("tokenizer.ggml.model".into(), Value::Str("gpt2".into()));
    g.metadata.insert(
        "tokenizer.ggml.pre".into(),
        Value::Str("chatglm-bpe".into()),
    );
    let e = attnlab_model::gguf::tokenizer::tokenizer_json(&g)
        .unwrap_err()
        .to_string();
    assert!(e.contains("`chatglm-bpe` is not read yet"), "{e}");
    // the message names what is read
    assert!(
        e.contains("smollm") && e.contains("llama-bpe") && e.contains("qwen2"),
        "{e}"
    );
}

/// A quantized matrix stays as small as its file and multiplies as its dequantized f32 copy
/// does (`QMatrix::matmul_t`, which dequantizes a tile of rows at a time).
#[test]
fn a_quantized_matrix_keeps_its_blocks_and_multiplies_as_its_values() {
    use attnlab_model::qmatrix::{QMatrix, Storage};
    let bytes = fixture();
    let g = Gguf::parse(&bytes).unwrap();
    for ty in GgmlType::READ {
        let t = g.tensor(&format!("q.{}", ty.name())).unwrap();
        let q = QMatrix::from_gguf(&g, &bytes, t).unwrap();
        let values = g.read(&bytes, t).unwrap();
        let (rows, cols) = (q.rows, q.cols);
        assert_eq!((rows, cols), (2, t.shape[1]));
        if ty == GgmlType::F32 {
            assert!(matches!(q.storage, Storage::F32(_)));
        } else {
            assert_eq!(
                q.size(),
                t.len,
                "{}: the file's bytes, not f32 values",
                ty.name()
            );
        }
        let m = 3;
        let x: Vec<f32> = (0..m * cols)
            .map(|i| ((i * 7919) % 13) as f32 / 13.0 - 0.5)
            .collect();
        let mut y = vec![0f32; m * rows];
        q.matmul_t(&x, m, &mut y);
        for i in 0..m {
            for r in 0..rows {
                let want: f64 = (0..cols)
                    .map(|c| x[i * cols + c] as f64 * values[r * cols + c] as f64)
                    .sum();
                let got = y[i * rows + r] as f64;
                assert!(
                    (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                    "{} y[{i}][{r}] = {got}, want {want}",
                    ty.name()
                );
            }
        }
    }
}
