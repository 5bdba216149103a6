//! Writes the malformed-model corpus: one folder per case with config.json,
//! model.safetensors, tokenizer.json and expect.txt (words the loader's error must contain,
//! one per line). `cargo run -p attnlab-model --example malformed_corpus -- DIR`
//! (the committed copy is crates/model/tests/data/malformed; tests/malformed_corpus.rs loads it).

use std::path::Path;

use attnlab_model::testing::{lesson_tokenizer_json, random_model};
use attnlab_model::{Config, LnPlacement, Tokenizer};

type Tensor = (String, &'static str, Vec<usize>, Vec<u8>);
/// (case, config.json, model.safetensors, tokenizer.json, words the error must name)
type Case = (&'static str, String, Vec<u8>, String, Vec<String>);

/// A safetensors file from (name, dtype, shape, bytes), with the header as given.
fn st(ts: &[Tensor]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in ts {
        header.insert(
            name.clone(),
            serde_json::json!({ "dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()] }),
        );
        data.extend_from_slice(bytes);
    }
    with_header(
        serde_json::Value::Object(header).to_string().as_bytes(),
        &data,
    )
}

fn with_header(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    out
}

fn w(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: malformed_corpus DIR");
    let dir = Path::new(&dir);
    let tok = lesson_tokenizer_json();
    let vocab = Tokenizer::from_bytes(tok.as_bytes()).unwrap().vocab_size();
    let config = Config {
        n_embd: 8,
        n_head: 2,
        n_layer: 1,
        n_positions: 8,
        vocab_size: vocab,
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: LnPlacement::Post,
        scale_embedding: false,
    };
    let model = random_model(&config, 5, 1.0);
    let tensors: Vec<Tensor> = model
        .tensors()
        .into_iter()
        .map(|(n, s, v)| (n, "F32", s, f32s(v)))
        .collect();
    let good = st(&tensors);
    let cfg = config.to_json();
    let edit = |f: &dyn Fn(&mut Vec<Tensor>)| {
        let mut t = tensors.clone();
        f(&mut t);
        st(&t)
    };
    let cfg_with = |k: &str, v: serde_json::Value| {
        let mut c: serde_json::Value = serde_json::from_str(&cfg).unwrap();
        c[k] = v;
        c.to_string()
    };
    let set = |name: &str, i: usize, x: f32| {
        let name = name.to_string();
        edit(&move |t| {
            let e = t.iter_mut().find(|e| e.0 == name).unwrap();
            e.3[i * 4..i * 4 + 4].copy_from_slice(&x.to_le_bytes());
        })
    };
    let n_header = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    // (case, config.json, model.safetensors, tokenizer.json, words the error names)
    let cases: Vec<Case> = vec![
        (
            "truncated-data",
            cfg.clone(),
            good[..good.len() - 100].to_vec(),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "truncated-header",
            cfg.clone(),
            good[..8 + n_header / 2].to_vec(),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "empty-file",
            cfg.clone(),
            vec![],
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "huge-header-length",
            cfg.clone(),
            [&u64::MAX.to_le_bytes()[..], &good[8..]].concat(),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "header-longer-than-file",
            cfg.clone(),
            [&((good.len() as u64) * 2).to_le_bytes()[..], &good[8..]].concat(),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "header-not-json",
            cfg.clone(),
            with_header(b"{not json at all}", &good[8 + n_header..]),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "header-entry-without-dtype",
            cfg.clone(),
            with_header(
                br#"{"wte.weight":{"shape":[2],"data_offsets":[0,8]}}"#,
                &[0; 8],
            ),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "offsets-past-the-data",
            cfg.clone(),
            with_header(
                br#"{"wte.weight":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
                &[0; 8],
            ),
            tok.clone(),
            w(&["safetensors"]),
        ),
        (
            "wrong-dtype",
            cfg.clone(),
            edit(&|t| t.iter_mut().find(|e| e.0 == "wpe.weight").unwrap().1 = "I32"),
            tok.clone(),
            w(&["wpe.weight", "I32"]),
        ),
        (
            "wrong-shape",
            cfg.clone(),
            edit(&|t| {
                let e = t
                    .iter_mut()
                    .find(|e| e.0 == "h.0.attn.c_attn.weight")
                    .unwrap();
                e.2 = vec![e.2[1], e.2[0]];
            }),
            tok.clone(),
            w(&["h.0.attn.c_attn.weight", "[24, 8]", "[8, 24]"]),
        ),
        (
            "missing-tensor",
            cfg.clone(),
            edit(&|t| t.retain(|e| e.0 != "h.0.mlp.c_fc.bias")),
            tok.clone(),
            w(&["h.0.mlp.c_fc.bias"]),
        ),
        (
            "nan-weight",
            cfg.clone(),
            set("h.0.ln_2.bias", 3, f32::NAN),
            tok.clone(),
            w(&["h.0.ln_2.bias", "NaN"]),
        ),
        (
            "inf-weight",
            cfg.clone(),
            set("wte.weight", 17, f32::INFINITY),
            tok.clone(),
            w(&["wte.weight", "inf"]),
        ),
        (
            "config-n_embd-disagrees",
            cfg_with("n_embd", 16.into()),
            good.clone(),
            tok.clone(),
            w(&["wte.weight"]),
        ),
        (
            "config-more-layers-than-weights",
            cfg_with("n_layer", 2.into()),
            good.clone(),
            tok.clone(),
            w(&["h.1."]),
        ),
        (
            "config-heads-do-not-divide",
            cfg_with("n_head", 3.into()),
            good.clone(),
            tok.clone(),
            w(&["not divisible"]),
        ),
        (
            "config-absurd-context",
            cfg_with("n_positions", 1_000_000_000u64.into()),
            good.clone(),
            tok.clone(),
            w(&["n_positions"]),
        ),
        (
            "config-not-json",
            "{\"n_embd\": 8,".into(),
            good.clone(),
            tok.clone(),
            w(&["config"]),
        ),
        (
            "config-missing-field",
            {
                let mut c: serde_json::Value = serde_json::from_str(&cfg).unwrap();
                c.as_object_mut().unwrap().remove("n_embd");
                c.to_string()
            },
            good.clone(),
            tok.clone(),
            w(&["n_embd"]),
        ),
        (
            "pre-ln-without-ln_f",
            cfg_with("ln_placement", "pre".into()),
            good.clone(),
            tok.clone(),
            w(&["ln_f.weight"]),
        ),
        (
            "tokenizer-truncated",
            cfg.clone(),
            good.clone(),
            tok.chars().take(tok.chars().count() / 2).collect(),
            w(&["tokenizer"]),
        ),
        (
            "tokenizer-not-a-tokenizer",
            cfg.clone(),
            good.clone(),
            "{\"hello\": \"world\"}".into(),
            w(&["tokenizer"]),
        ),
        (
            "tokenizer-larger-than-vocab",
            cfg_with("vocab_size", (vocab - 10).into()),
            edit(&|t| {
                let e = t.iter_mut().find(|e| e.0 == "wte.weight").unwrap();
                e.2[0] -= 10;
                e.3.truncate(e.2[0] * e.2[1] * 4);
            }),
            tok.clone(),
            vec!["vocab".to_string(), vocab.to_string()],
        ),
    ];
    std::fs::create_dir_all(dir).unwrap();
    for (name, config, weights, tokenizer, expect) in &cases {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("config.json"), config).unwrap();
        std::fs::write(d.join("model.safetensors"), weights).unwrap();
        std::fs::write(d.join("tokenizer.json"), tokenizer).unwrap();
        std::fs::write(d.join("expect.txt"), expect.join("\n") + "\n").unwrap();
    }
    // and the valid model they all break, for comparison
    let d = dir.join("valid");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("config.json"), &cfg).unwrap();
    std::fs::write(d.join("model.safetensors"), &good).unwrap();
    std::fs::write(d.join("tokenizer.json"), &tok).unwrap();
    println!(
        "{} malformed cases and one valid model in {}",
        cases.len(),
        dir.display()
    );
}
