//! The bundled tokenizer: BPE over characters whose initial alphabet holds all 2,350
//! KS X 1001 Hangul syllables and printable ASCII, with byte fallback (no `<unk>`), so every
//! Hangul syllable is at least one whole token.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::models::{ModelWrapper, TrainerWrapper};
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::metaspace::{Metaspace, PrependScheme};
use tokenizers::pre_tokenizers::punctuation::Punctuation;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::SplitDelimiterBehavior;
use tokenizers::Tokenizer;

/// The 2,350 Hangul syllables of KS X 1001 (EUC-KR rows 0xB0–0xC8, cells 0xA1–0xFE).
pub fn ksx1001_hangul() -> Vec<char> {
    let mut out = Vec::with_capacity(2350);
    for hi in 0xB0u8..=0xC8 {
        for lo in 0xA1u8..=0xFE {
            let bytes = [hi, lo];
            let (s, _, bad) = encoding_rs::EUC_KR.decode(&bytes);
            assert!(!bad, "EUC-KR {hi:02X}{lo:02X}");
            out.extend(s.chars());
        }
    }
    out
}

/// Trains on `files` and returns tokenizer.json text with `vocab_size` ids in all
/// (256 of them `<0xNN>` byte-fallback tokens).
pub fn train(files: &[String], vocab_size: usize) -> Result<String, String> {
    let mut alphabet: HashSet<char> = ksx1001_hangul().into_iter().collect();
    alphabet.extend((0x20u8..0x7F).map(char::from));
    alphabet.extend(['\n', '\u{2581}']);
    let n_alpha = alphabet.len();
    let trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size - 256)
        .min_frequency(2)
        .initial_alphabet(alphabet)
        .limit_alphabet(n_alpha + 300) // plus the 300 most frequent other characters
        .show_progress(true)
        .build();
    let mut tok = Tokenizer::new(ModelWrapper::BPE(BPE::default()));
    tok.with_normalizer(Some(NFC)).map_err(|e| e.to_string())?;
    // words keep their leading ▁; punctuation stands alone ("better," → "▁better", ",")
    tok.with_pre_tokenizer(Some(Sequence::new(vec![
        Metaspace::new('\u{2581}', PrependScheme::Never, true).into(),
        Punctuation::new(SplitDelimiterBehavior::Isolated).into(),
    ])));
    let mut trainer = TrainerWrapper::BpeTrainer(trainer);
    tok.train_from_files(&mut trainer, files.to_vec())
        .map_err(|e| e.to_string())?;
    let mut v: Value = serde_json::from_str(&tok.to_string(false).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    // byte fallback: append <0x00>…<0xFF> and switch it on
    let model = v["model"].as_object_mut().ok_or("no model")?;
    let vocab = model["vocab"].as_object_mut().ok_or("no vocab")?;
    let base = vocab.len();
    for b in 0..=255u32 {
        vocab.insert(format!("<0x{b:02X}>"), json!(base as u32 + b));
    }
    model.insert("byte_fallback".into(), json!(true));
    model.insert("unk_token".into(), Value::Null);
    v["decoder"] = json!({"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u{2581}"}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"}]});
    serde_json::to_string(&v).map_err(|e| e.to_string())
}

/// Tokens per Hangul syllable (on Hangul-dominant lines) and per English word (on
/// lines without Hangul) over a held-out text.
pub fn efficiency(tok: &attnlab_model::Tokenizer, text: &str) -> (f64, f64) {
    let (mut kt, mut ks, mut et, mut ew) = (0usize, 0usize, 0usize, 0usize);
    for line in text.lines() {
        let hangul = line
            .chars()
            .filter(|c| ('\u{AC00}'..='\u{D7A3}').contains(c))
            .count();
        let latin = line.chars().filter(|c| c.is_ascii_alphabetic()).count();
        let Ok(ids) = tok.ids(line) else { continue };
        if hangul > latin {
            kt += ids.len();
            ks += hangul;
        } else if hangul == 0 && latin > 0 {
            et += ids.len();
            ew += line.split_whitespace().count();
        }
    }
    (kt as f64 / ks.max(1) as f64, et as f64 / ew.max(1) as f64)
}

/// Writes `json` to `path`.
pub fn save(json: &str, path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, json)
}
