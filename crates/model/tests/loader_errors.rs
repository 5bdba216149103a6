//! Malformed model files: each gives an error that names the problem, never a panic.

use attnlab_model::testing::{char_bpe_tokenizer_json, random_model};
use attnlab_model::{forward, AttentionOptions, Bundle, Config, Error, LnPlacement, Model};
use safetensors::{tensor::TensorView, Dtype};

fn config(ln: LnPlacement) -> Config {
    Config {
        n_embd: 16,
        n_head: 2,
        n_layer: 2,
        n_positions: 8,
        vocab_size: 300,
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: ln,
        scale_embedding: false,
    }
}

/// The tensors of a valid pre-LN model as (name, dtype, shape, bytes), for editing.
fn tensors() -> Vec<(String, Dtype, Vec<usize>, Vec<u8>)> {
    let m = random_model(&config(LnPlacement::Pre), 1, 1.0);
    m.tensors()
        .into_iter()
        .map(|(n, s, v)| {
            (
                n,
                Dtype::F32,
                s,
                v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            )
        })
        .collect()
}

fn file(ts: &[(String, Dtype, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let views: Vec<(String, TensorView<'_>)> = ts
        .iter()
        .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize(views, None).unwrap()
}

fn load(bytes: &[u8]) -> Result<Model, Error> {
    Model::from_safetensors(config(LnPlacement::Pre), bytes)
}

fn err(bytes: &[u8]) -> String {
    load(bytes).expect_err("must be rejected").to_string()
}

#[test]
fn a_valid_file_loads_and_round_trips_in_f32_and_f16() {
    let bytes = file(&tensors());
    let m = load(&bytes).unwrap();
    assert_eq!(load(&m.to_safetensors(false)).unwrap(), m);
    let half = load(&m.to_safetensors(true)).unwrap();
    let max_err = half
        .weights
        .wte
        .iter()
        .zip(&m.weights.wte)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(
        max_err > 0.0 && max_err < 1e-3,
        "f16 round trip error {max_err}"
    );
}

#[test]
fn hugging_face_prefix_and_extra_tensors_are_accepted() {
    let mut ts: Vec<_> = tensors()
        .into_iter()
        .map(|(n, d, s, b)| (format!("transformer.{n}"), d, s, b))
        .collect();
    ts.push(("lm_head.weight".into(), Dtype::F32, vec![1], vec![0; 4]));
    let prefixed = load(&file(&ts)).unwrap();
    let plain = load(&file(&tensors())).unwrap();
    // every tensor where its unprefixed name puts it (h.0 is not h.1, ln_1 is not ln_2)…
    for ((name, shape, a), (_, _, b)) in prefixed.tensors().into_iter().zip(plain.tensors()) {
        assert!(
            a == b,
            "{name} {shape:?} differs from the unprefixed file's"
        );
    }
    assert_eq!(prefixed, plain);
    assert_eq!(plain, random_model(&config(LnPlacement::Pre), 1, 1.0));
    // …so the forward pass is the same, number for number
    let opts = AttentionOptions::default();
    let ids = [3, 1, 4, 1, 5, 9];
    assert_eq!(
        forward(&prefixed, &ids, &opts).unwrap(),
        forward(&plain, &ids, &opts).unwrap()
    );
}

#[test]
fn bf16_weights_are_converted() {
    let ts: Vec<_> = tensors()
        .into_iter()
        .map(|(n, _, s, b)| {
            let v: Vec<u8> = b
                .chunks_exact(4)
                .flat_map(|c| {
                    half::bf16::from_f32(f32::from_le_bytes([c[0], c[1], c[2], c[3]])).to_le_bytes()
                })
                .collect();
            (n, Dtype::BF16, s, v)
        })
        .collect();
    let m = load(&file(&ts)).unwrap();
    // each weight is the f32 whose top 16 bits are the stored bf16 and whose low 16 are zero
    let mut nonzero = 0;
    for ((name, _, loaded), (stored, _, _, bytes)) in m.tensors().into_iter().zip(&ts) {
        assert_eq!(&name, stored);
        assert_eq!(loaded.len() * 2, bytes.len(), "{name}");
        for (i, (x, b)) in loaded.iter().zip(bytes.chunks_exact(2)).enumerate() {
            let want = f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16);
            assert_eq!(x.to_bits(), want.to_bits(), "{name}[{i}]: {x} vs {want}");
        }
        nonzero += loaded.iter().filter(|x| **x != 0.0).count();
    }
    assert!(nonzero > 1000, "only {nonzero} non-zero weights");
}

#[test]
fn truncated_file() {
    let bytes = file(&tensors());
    let e = err(&bytes[..bytes.len() / 2]);
    assert!(e.contains("safetensors"), "{e}");
}

#[test]
fn empty_file() {
    assert!(err(&[]).contains("safetensors"));
}

#[test]
fn huge_header_length() {
    let mut bytes = file(&tensors());
    bytes[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = err(&bytes);
    assert!(
        e.contains("safetensors") && e.to_lowercase().contains("header"),
        "{e}"
    );
}

#[test]
fn header_longer_than_the_file() {
    let mut bytes = file(&tensors());
    let n = bytes.len() as u64;
    bytes[..8].copy_from_slice(&(n + 10).to_le_bytes());
    assert!(err(&bytes).contains("safetensors"));
}

#[test]
fn header_is_not_json() {
    let mut bytes = 16u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"this is not json");
    assert!(err(&bytes).contains("safetensors"));
}

#[test]
fn missing_tensor_is_named() {
    let ts: Vec<_> = tensors()
        .into_iter()
        .filter(|t| t.0 != "h.1.mlp.c_fc.bias")
        .collect();
    assert_eq!(
        load(&file(&ts)).unwrap_err(),
        Error::MissingTensor {
            name: "h.1.mlp.c_fc.bias".into()
        }
    );
}

#[test]
fn wrong_shape_names_tensor_and_both_shapes() {
    let mut ts = tensors();
    let t = ts
        .iter_mut()
        .find(|t| t.0 == "h.0.attn.c_attn.weight")
        .unwrap();
    t.2 = vec![48, 16]; // transposed
    let e = load(&file(&ts)).unwrap_err();
    assert_eq!(
        e,
        Error::Shape {
            name: "h.0.attn.c_attn.weight".into(),
            expected: vec![16, 48],
            found: vec![48, 16]
        }
    );
    assert!(e.to_string().contains("[48, 16]") && e.to_string().contains("[16, 48]"));
}

#[test]
fn wrong_dtype_is_named() {
    let mut ts = tensors();
    let t = ts.iter_mut().find(|t| t.0 == "wpe.weight").unwrap();
    t.1 = Dtype::I32;
    let e = err(&file(&ts));
    assert!(e.contains("wpe.weight") && e.contains("I32"), "{e}");
}

#[test]
fn nan_and_inf_weights_are_found() {
    for (value, word) in [(f32::NAN, "NaN"), (f32::INFINITY, "inf")] {
        let mut ts = tensors();
        let t = ts.iter_mut().find(|t| t.0 == "h.1.ln_2.bias").unwrap();
        t.3[12..16].copy_from_slice(&value.to_le_bytes());
        let e = err(&file(&ts));
        assert!(
            e.contains("h.1.ln_2.bias") && e.contains("index 3") && e.contains(word),
            "{e}"
        );
    }
}

#[test]
fn config_that_disagrees_with_the_weights() {
    let mut c = config(LnPlacement::Pre);
    c.n_embd = 32;
    let e = Model::from_safetensors(c, &file(&tensors())).unwrap_err();
    assert!(
        matches!(&e, Error::Shape { name, .. } if name == "wte.weight"),
        "{e}"
    );
}

#[test]
fn pre_ln_needs_ln_f_but_post_ln_does_not() {
    let ts: Vec<_> = tensors()
        .into_iter()
        .filter(|t| !t.0.starts_with("ln_f"))
        .collect();
    assert_eq!(
        load(&file(&ts)).unwrap_err(),
        Error::MissingTensor {
            name: "ln_f.weight".into()
        }
    );
    assert!(Model::from_safetensors(config(LnPlacement::Post), &file(&ts)).is_ok());
}

#[test]
fn bad_configs_and_tokenizers_are_rejected() {
    let st = file(&tensors());
    let tok = char_bpe_tokenizer_json("abc");
    let cfg = config(LnPlacement::Pre).to_json();
    assert!(Bundle::from_bytes(cfg.as_bytes(), &st, tok.as_bytes()).is_ok());

    let e = Bundle::from_bytes(b"{not json", &st, tok.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("config.json"), "{e}");
    let bad = cfg.replace("\"n_head\": 2", "\"n_head\": 3");
    let e = Bundle::from_bytes(bad.as_bytes(), &st, tok.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not divisible"), "{e}");

    let e = Bundle::from_bytes(cfg.as_bytes(), &st, b"{\"model\": 1}")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("tokenizer.json"), "{e}");
    // 256 byte tokens + 60 characters = 316 ids, but the model has 300
    let big =
        char_bpe_tokenizer_json("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01234567");
    let e = Bundle::from_bytes(cfg.as_bytes(), &st, big.as_bytes()).unwrap_err();
    assert_eq!(
        e,
        Error::VocabMismatch {
            tokenizer: 316,
            model: 300
        }
    );
}

#[test]
fn random_bytes_never_panic() {
    let good = file(&tensors());
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for round in 0..200 {
        let mut bytes = good.clone();
        for _ in 0..(1 + round % 8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let i = (state as usize) % bytes.len();
            bytes[i] = (state >> 32) as u8;
        }
        if round % 3 == 0 {
            bytes.truncate((state as usize) % bytes.len());
        }
        let _ = load(&bytes); // Ok or Err, but never a panic
    }
}
