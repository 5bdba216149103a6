//! The bundled model in assets/model: it loads, and the engine's CPU forward equals the
//! training-time candle forward on five sentences.

use std::path::PathBuf;

use attnlab_model::{forward, AttentionOptions, Bundle, LnPlacement};
use attnlab_train::run::gpt_from_file;
use candle_core::{Device, Tensor};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/model")
}

#[test]
fn bundled_model_matches_candle_on_five_sentences() {
    let b =
        Bundle::load_dir(&dir()).expect("assets/model holds the bundled model (see its README)");
    let c = &b.model.config;
    assert_eq!(
        (c.n_layer, c.n_head, c.n_embd, c.d_k(), c.n_positions),
        (4, 4, 256, 64, 128)
    );
    assert_eq!(c.ln_placement, LnPlacement::Post);
    assert!(b.model.weights.ln_f.is_none());
    let gpt = gpt_from_file(c, &dir().join("model.safetensors")).unwrap();
    for text in [
        "나는 어제 산 커피를 오늘 마셨다",
        "Which do you like better, coffee or tea?",
        "민수는 어제 시장에서 사과를 샀다. 그리고 그는 그것을 먹었다.",
        "In the beginning God created the heavens and the earth.",
        "대한민국은 민주공화국이다.",
    ] {
        let ids = b.tokenizer.ids(text).unwrap();
        let ours = forward(&b.model, &ids, &AttentionOptions::default()).unwrap();
        let x = Tensor::new(ids.as_slice(), &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let theirs = gpt
            .forward(&x)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        assert_eq!(ours.logits.len(), theirs.len());
        for (i, (a, b)) in ours.logits.iter().zip(&theirs).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4,
                "{text}: logit {i}: engine {a}, candle {b}"
            );
        }
    }
}

#[test]
fn bundled_tokenizer_keeps_hangul_syllables_whole() {
    let b = Bundle::load_dir(&dir()).unwrap();
    let toks = b
        .tokenizer
        .encode("나는 어제 산 커피를 오늘 마셨다")
        .unwrap();
    let shown: Vec<&str> = toks.iter().map(|t| t.display.as_str()).collect();
    assert!(toks.iter().all(|t| !t.partial), "{shown:?}");
    assert_eq!(
        shown.concat().replace('␣', " "),
        "나는 어제 산 커피를 오늘 마셨다"
    );
    // every KS X 1001 syllable is at least one whole token
    let syllables: String = attnlab_train::tokenizer::ksx1001_hangul()
        .into_iter()
        .collect();
    let all = b.tokenizer.encode(&syllables).unwrap();
    assert!(all
        .iter()
        .all(|t| !t.partial && !t.piece.starts_with("<0x")));
}
