//! The CPU forwards against Hugging Face `transformers` (an independent implementation): small
//! random Llama, Llama 3, Qwen2, Mistral and GPT-2 models and the logits and attention weights
//! transformers computes with them (eager attention, float32), written by
//! `tools/hf/make_fixtures.py` into tests/data/hf — see there for what each model exercises
//! (grouped-query and multi-query attention, q/k/v/o biases, tied and untied heads, Llama 3's
//! RoPE scaling, bf16 weights, sharded files).

use std::path::{Path, PathBuf};

use attnlab_model::inspect::Inspect;
use attnlab_model::llama::{LlamaBundle, LlamaModel};
use attnlab_model::{forward, AttentionOptions, Model, Trace};
use safetensors::SafeTensors;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hf")
        .join(name)
}

struct Expected {
    ids: Vec<u32>,
    /// (T, V)
    logits: Vec<f32>,
    /// Per layer, (H, T, T).
    attn: Vec<Vec<f32>>,
}

fn expected(dir: &Path) -> Expected {
    let bytes = std::fs::read(dir.join("expected.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let f32s = |name: &str| -> Vec<f32> {
        st.tensor(name)
            .unwrap()
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    };
    let ids = st
        .tensor("ids")
        .unwrap()
        .data()
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()) as u32)
        .collect();
    let layers = st.names().iter().filter(|n| n.starts_with("attn.")).count();
    Expected {
        ids,
        logits: f32s("logits"),
        attn: (0..layers).map(|l| f32s(&format!("attn.{l}"))).collect(),
    }
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// The trace's logits and every head's weights against transformers'.
fn check(name: &str, trace: &Trace, want: &Expected) {
    let logits = max_diff(&trace.logits, &want.logits);
    let scale = want.logits.iter().fold(0f32, |m, x| m.max(x.abs()));
    assert!(
        logits < 2e-5 * scale.max(1.0),
        "{name}: logits differ by {logits} (largest logit {scale})"
    );
    assert_eq!(trace.layers.len(), want.attn.len(), "{name}");
    for (l, (layer, attn)) in trace.layers.iter().zip(&want.attn).enumerate() {
        let d = max_diff(&layer.weights, attn);
        assert!(
            d < 1e-5,
            "{name}: layer {l}'s attention weights differ by {d}"
        );
    }
}

#[test]
fn llama_family_models_match_transformers() {
    for name in [
        "llama-gqa-tied",
        "llama3-untied-bias",
        "qwen2-mqa",
        "mistral-bf16-sharded",
    ] {
        let dir = fixture(name);
        let m = LlamaModel::load_hf_dir(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let want = expected(&dir);
        let tr = m.trace(&want.ids, &AttentionOptions::default()).unwrap();
        check(name, &tr, &want);
        assert_eq!(
            m.logits(&want.ids).unwrap(),
            tr.logits,
            "{name}: the lean pass"
        );
    }
}

#[test]
fn what_each_fixture_exercises_is_there() {
    let m = |name| LlamaModel::load_hf_dir(&fixture(name)).unwrap();
    let gqa = m("llama-gqa-tied");
    assert_eq!((gqa.config.n_head, gqa.config.n_kv_head), (4, 2));
    assert!(gqa.output.is_none());
    let l3 = m("llama3-untied-bias");
    assert!(l3.config.rope_scaling.is_some() && l3.output.is_some());
    assert!(l3.layers[0].bias.o.is_some() && l3.layers[0].bias.q.is_some());
    // the three bands of Llama 3's scaling: kept, blended, stretched
    let plain = attnlab_model::llama::LlamaConfig {
        rope_scaling: None,
        ..l3.config.clone()
    };
    let (scaled, unscaled) = (l3.config.inv_freq(), plain.inv_freq());
    assert!(scaled[0] < unscaled[0] && scaled[0] > unscaled[0] / 8.0);
    assert_eq!(scaled[2], unscaled[2] / 8.0);
    let qwen = m("qwen2-mqa");
    assert_eq!(qwen.config.n_kv_head, 1);
    assert!(qwen.layers[0].bias.k.is_some() && qwen.layers[0].bias.o.is_none());
    let mistral = m("mistral-bf16-sharded");
    assert_eq!(mistral.config.sliding_window, Some(4096));
    assert!(matches!(
        &mistral.layers[1].q.storage,
        attnlab_model::qmatrix::Storage::Blocks { bytes, .. } if bytes.len() == 32 * 32 * 2
    ));
}

#[test]
fn a_hugging_face_folder_with_its_tokenizer_runs_the_lessons_sentence() {
    let dir = fixture("llama-gqa-tied");
    let b = LlamaBundle::load_hf_dir(&dir).unwrap();
    let want = expected(&dir);
    let sentence = "Which do you like better, coffee or tea? I like coffee better than tea, but my friend likes tea.";
    let (tokens, tr) = b.trace(sentence, &AttentionOptions::default()).unwrap();
    let ids: Vec<u32> = tokens.iter().map(|t| t.id).collect();
    assert_eq!(ids, want.ids, "the tokenizer gives transformers' ids");
    check("llama-gqa-tied", &tr, &want);
}

#[test]
fn the_gpt2_forward_matches_transformers() {
    let dir = fixture("gpt2");
    let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
    let m = Model::from_bytes(&read("config.json"), &read("model.safetensors")).unwrap();
    let want = expected(&dir);
    let tr = forward(&m, &want.ids, &AttentionOptions::default()).unwrap();
    check("gpt2", &tr, &want);
}

#[test]
fn hugging_face_configs_that_are_not_read_are_refused_by_name() {
    use attnlab_model::llama::LlamaConfig;
    let base: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("llama3-untied-bias").join("config.json")).unwrap(),
    )
    .unwrap();
    let refused = |edit: &dyn Fn(&mut serde_json::Value), words: &[&str]| {
        let mut j = base.clone();
        edit(&mut j);
        let err = LlamaConfig::from_hf_json(j.to_string().as_bytes())
            .map(|_| ())
            .unwrap_err()
            .to_string();
        for w in words {
            assert!(err.contains(w), "{err:?} does not mention {w:?}");
        }
    };
    refused(
        &|j| j["model_type"] = "gemma".into(),
        &["model_type", "gemma"],
    );
    refused(
        &|j| j["rope_parameters"]["rope_type"] = "yarn".into(),
        &["yarn"],
    );
    refused(
        &|j| j["hidden_act"] = "gelu".into(),
        &["hidden_act", "gelu"],
    );
    refused(
        &|j| j["num_key_value_heads"] = 3.into(),
        &["3 key/value heads"],
    );
    refused(&|j| j["head_dim"] = 16.into(), &["head_dim is 16"]);
    refused(&|j| j["mlp_bias"] = true.into(), &["mlp_bias"]);
    refused(&|j| j["hidden_size"] = 0.into(), &["hidden_size"]);
    refused(
        &|j| j["rope_parameters"]["high_freq_factor"] = 0.5.into(),
        &["high_freq_factor"],
    );
    refused(
        &|j| j["sliding_window"] = 0.into(),
        &["sliding_window is 0"],
    );
    assert!(LlamaConfig::from_hf_json(b"{").is_err());
    // θ outside `rope_parameters` is read when the parameters do not hold it
    let mut outside = base.clone();
    outside["rope_parameters"]
        .as_object_mut()
        .unwrap()
        .remove("rope_theta");
    outside["rope_theta"] = 500.0.into();
    let (c, ..) = LlamaConfig::from_hf_json(outside.to_string().as_bytes()).unwrap();
    assert_eq!(c.rope_theta, 500.0);
    // transformers 4's spelling: rope_theta and rope_scaling at the top level
    let mut v4 = base.clone();
    let rope = v4["rope_parameters"].take();
    v4.as_object_mut().unwrap().remove("rope_parameters");
    v4["rope_theta"] = rope["rope_theta"].clone();
    v4["rope_scaling"] = rope;
    let (c4, ..) = LlamaConfig::from_hf_json(v4.to_string().as_bytes()).unwrap();
    let (c5, ..) = LlamaConfig::from_hf_json(base.to_string().as_bytes()).unwrap();
    assert_eq!(c4, c5);
}

fn gguf_models(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/gguf-models")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A qwen2 GGUF file (tools/gguf/make_models.py: hf/qwen2-mqa's weights as llama.cpp's
/// converter lays them out, q and k not permuted, with q, k and v biases) computes what
/// transformers computes with the Hugging Face folder: RoPE on Hugging Face's halves, the
/// biases read from `blk.N.attn_q.bias` …
#[test]
fn a_qwen2_gguf_file_computes_what_transformers_computes() {
    let bundle = LlamaBundle::from_gguf_bytes(&gguf_models("qwen2-mqa.gguf")).unwrap();
    let m = &bundle.model;
    assert_eq!(m.config.rope_pairs, attnlab_model::llama::RopePairs::Halves);
    assert_eq!((m.config.n_head, m.config.n_kv_head), (4, 1));
    assert!(m.layers.iter().all(|l| {
        let b = &l.bias;
        b.q.is_some() && b.k.is_some() && b.v.is_some() && b.o.is_none()
    }));
    let want = expected(&fixture("qwen2-mqa"));
    let tr = m.trace(&want.ids, &AttentionOptions::default()).unwrap();
    check("qwen2-mqa.gguf", &tr, &want);
    // the keys are named after the architecture: the same file calling itself "llama" is
    // refused for the missing llama.* keys (not read with a llama file's RoPE pairs)
    let mut bytes = gguf_models("qwen2-mqa.gguf");
    let at = bytes.windows(5).position(|w| w == b"qwen2").unwrap();
    bytes[at..at + 5].copy_from_slice(b"llama");
    let err = LlamaBundle::from_gguf_bytes(&bytes)
        .err()
        .map(|e| e.to_string());
    assert!(
        err.as_deref().is_some_and(|e| e.contains("llama.")),
        "a qwen2 file's keys are not llama's: {err:?}"
    );
}

/// A llama GGUF file of a Llama 3 model (tools/gguf/make_models.py: hf/llama3-untied-bias's
/// weights with q and k rows permuted as llama.cpp's converter permutes them, q, k, v and o
/// biases, an untied head, and its rope_scaling as the converter writes it: the tensor
/// `rope_freqs.weight`, one factor per dimension pair) computes what transformers computes.
#[test]
fn a_llama3_gguf_file_with_rope_factors_computes_what_transformers_computes() {
    let bytes = gguf_models("llama3-untied-bias.gguf");
    let m = LlamaBundle::from_gguf_bytes(&bytes).unwrap().model;
    let c = &m.config;
    assert_eq!(c.rope_pairs, attnlab_model::llama::RopePairs::Adjacent);
    assert!(c.rope_scaling.is_none() && m.output.is_some());
    // the factors blend the highest frequency, stretch the lowest by 8
    let f = c.rope_factors.as_deref().unwrap();
    assert!(
        f.len() == 4 && f[0] > 1.0 && f[0] < 8.0 && f[3] == 8.0,
        "{f:?}"
    );
    assert!(m.layers[1].bias.o.is_some() && m.layers[1].bias.k.is_some());
    // the config the page reads from the file's head has no factors (a tensor's data) until
    // it reads them from the bytes, as the page does for the angles it shows
    let (g, mut head, _) = LlamaBundle::read_head(&bytes, bytes.len()).unwrap();
    assert!(head.rope_factors.is_none());
    head.read_rope_factors(&g, &bytes[..]).unwrap();
    assert_eq!(&head, c);
    let want = expected(&fixture("llama3-untied-bias"));
    let tr = m.trace(&want.ids, &AttentionOptions::default()).unwrap();
    check("llama3-untied-bias.gguf", &tr, &want);
    // the frequencies are the Hugging Face folder's (its config's rope_scaling)
    let hf = LlamaModel::load_hf_dir(&fixture("llama3-untied-bias")).unwrap();
    for (a, b) in c.inv_freq().iter().zip(hf.config.inv_freq()) {
        assert!((a - b).abs() <= 1e-6 * b, "{a} against {b}");
    }
}

/// The pre-tokenizers "qwen2" (every digit alone) and "llama-bpe" (Llama 3: up to three
/// digits) split as transformers splits them, building its tokenizer from the same GGUF
/// metadata (tokenized.json): numbers, contractions in either case, runs of spaces and line
/// breaks, Korean, an emoji. The two files differ only in the name, and their ids differ.
#[test]
fn gguf_pre_tokenizers_split_as_transformers_does() {
    let want: serde_json::Value = serde_json::from_slice(&gguf_models("tokenized.json")).unwrap();
    let texts: Vec<&str> = want["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let mut seen = std::collections::BTreeMap::new();
    for (file, ids) in want["ids"].as_object().unwrap() {
        let bytes = gguf_models(file);
        let g = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
        let json = attnlab_model::gguf::tokenizer::tokenizer_json(&g).unwrap();
        let tok = attnlab_model::Tokenizer::from_bytes(json.as_bytes()).unwrap();
        let ids = ids.as_array().unwrap();
        for (text, want) in texts.iter().zip(ids) {
            let got: Vec<u64> = tok
                .encode(text)
                .unwrap()
                .iter()
                .map(|t| t.id as u64)
                .collect();
            let want: Vec<u64> = want
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(got, want, "{file}: {text:?}");
        }
        seen.insert(file.as_str(), ids.clone());
    }
    assert_eq!(seen.len(), 6);
    let split = |f: &str| seen[f].clone();
    assert_ne!(
        split("tokenizer-qwen2.gguf"),
        split("tokenizer-llama-bpe.gguf"),
        "qwen2 and llama-bpe split numbers apart"
    );
    // a file that says add_bos_token: transformers begins every text with the BOS token
    // (700, its last token), then the same ids
    for (with, without) in split("tokenizer-llama-bpe-bos.gguf")
        .iter()
        .zip(split("tokenizer-llama-bpe.gguf").iter())
    {
        let (with, without) = (with.as_array().unwrap(), without.as_array().unwrap());
        assert_eq!((with[0].as_u64(), &with[1..]), (Some(700), &without[..]));
    }
}

/// The BOS token a GGUF file's tokenizer adds stands for no text: an empty span at 0, shown
/// as its name; an empty text is that token alone. A file that asks for a BOS token it does
/// not name, or names past its vocabulary, is refused.
#[test]
fn a_gguf_bos_token_spans_no_text() {
    let bytes = gguf_models("tokenizer-llama-bpe-bos.gguf");
    let g = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
    let json = attnlab_model::gguf::tokenizer::tokenizer_json(&g).unwrap();
    let tok = attnlab_model::Tokenizer::from_bytes(json.as_bytes()).unwrap();
    let toks = tok.encode("Which do").unwrap();
    assert_eq!((toks[0].id, toks[0].span), (700, (0, 0)));
    assert_eq!(toks[0].display, "<|begin_of_text|>");
    assert_eq!(toks[1].span.0, 0);
    let empty = tok.encode("").unwrap();
    assert_eq!(empty.iter().map(|t| t.id).collect::<Vec<_>>(), [700]);

    use attnlab_model::gguf::Value;
    for (id, says) in [
        (None, "bos_token_id is missing"),
        (Some(701), "701 is past the 701 tokens"),
    ] {
        let mut g = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
        match id {
            None => g.metadata.remove("tokenizer.ggml.bos_token_id"),
            Some(id) => g
                .metadata
                .insert("tokenizer.ggml.bos_token_id".into(), Value::U32(id)),
        };
        let e = attnlab_model::gguf::tokenizer::tokenizer_json(&g).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
    }
    let mut g = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
    g.metadata
        .insert("tokenizer.ggml.bos_token_id".into(), Value::I32(-1));
    let e = attnlab_model::gguf::tokenizer::tokenizer_json(&g).unwrap_err();
    assert!(e.to_string().contains("not a token id"), "{e}");

    // a SentencePiece file adds its BOS unless it says otherwise, but only one it names
    let spm = gguf_models("tokenizer-spm.gguf");
    let mut g = attnlab_model::gguf::Gguf::parse(&spm).unwrap();
    let first = |g: &attnlab_model::gguf::Gguf| {
        let json = attnlab_model::gguf::tokenizer::tokenizer_json(g).unwrap();
        let tok = attnlab_model::Tokenizer::from_bytes(json.as_bytes()).unwrap();
        tok.encode("Which").unwrap()[0].piece.clone()
    };
    assert_eq!(first(&g), "<s>");
    g.metadata.remove("tokenizer.ggml.bos_token_id");
    assert_eq!(first(&g), "\u{2581}Which");
    g.metadata
        .insert("tokenizer.ggml.add_bos_token".into(), Value::Bool(false));
    g.metadata
        .insert("tokenizer.ggml.bos_token_id".into(), Value::U32(1));
    assert_eq!(first(&g), "\u{2581}Which");
}
