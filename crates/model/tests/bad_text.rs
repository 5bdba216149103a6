//! The bad-text corpus (tests/data/bad-text.json, shared with the CLI and browser tests)
//! through the bundled model: every case gives a Trace or a clear error, never a panic, and
//! every Trace is finite with rows that are distributions.

use std::path::PathBuf;

use attnlab_model::cpu::MASKED;
use attnlab_model::{AttentionOptions, Bundle};
use serde_json::Value;

/// (name, text) of every case, with `repeat_to_chars` expanded.
pub fn bad_texts() -> Vec<(String, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad-text.json");
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    cases
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_string();
            let mut text = c["text"].as_str().unwrap().to_string();
            if let Some(n) = c["repeat_to_chars"].as_u64() {
                let unit = text.clone();
                while text.chars().count() < n as usize {
                    text.push_str(&unit);
                }
                text = text.chars().take(n as usize).collect();
            }
            (name, text)
        })
        .collect()
}

fn bundled() -> Bundle {
    Bundle::load_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/model")).unwrap()
}

#[test]
fn the_corpus_has_the_cases_the_issue_names() {
    let cases = bad_texts();
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let has = |pred: &dyn Fn(&str) -> bool| cases.iter().any(|(_, t)| pred(t));
    assert!(has(&|t| t.is_empty()));
    assert!(has(&|t| !t.is_empty() && t.trim().is_empty()));
    assert!(has(&|t| t.chars().count() == 10_000));
    assert!(has(&|t| t.contains('\u{200d}')), "emoji ZWJ");
    assert!(has(&|t| t.contains('🏽')), "skin tone");
    assert!(has(&|t| t.contains('🇰')), "flags");
    assert!(
        has(&|t| t.contains('م') && t.contains('커')),
        "RTL with Korean"
    );
    assert!(has(&|t| t.contains('\u{301}')), "combining marks");
    assert!(has(&|t| t.contains('ㄱ')), "lone jamo");
    assert!(has(&|t| t.contains('\u{1102}')), "NFD Hangul");
    assert!(has(&|t| t.contains('\0')), "NUL");
    assert!(has(&|t| t.contains("\n\n\n\n")), "repeated newlines");
    assert!(
        has(&|t| t.len() > 2000 && !t.contains(' ')),
        "a very long word"
    );
}

#[test]
fn every_bad_text_gives_a_finite_trace_or_a_clear_error() {
    let bundle = bundled();
    let v = bundle.model.config.vocab_size;
    for (name, text) in bad_texts() {
        match bundle.trace(&text, &AttentionOptions::default()) {
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.trim().is_empty(), "{name}: an empty error message");
                assert!(text.trim().is_empty(), "{name}: unexpected error {msg}");
            }
            Ok((tokens, trace)) => {
                assert_eq!(tokens.len(), trace.tokens.len() + trace.dropped, "{name}");
                for tok in &tokens {
                    assert!(!tok.display.is_empty(), "{name}: empty display");
                    if !text.contains('\u{fffd}') {
                        assert!(
                            !tok.display.contains('\u{fffd}'),
                            "{name}: {:?}",
                            tok.display
                        );
                    }
                }
                for (field, xs) in trace.fields() {
                    if let Some(i) = xs.iter().position(|x| !x.is_finite()) {
                        panic!("{name}: {field}[{i}] = {}", xs[i]);
                    }
                }
                let t = trace.dims.t;
                for l in &trace.layers {
                    for (r, row) in l.weights.chunks(t).enumerate() {
                        let s: f64 = row.iter().map(|&x| x as f64).sum();
                        assert!(
                            (s - 1.0).abs() <= 1e-6,
                            "{name}: weights row {r} sums to {s}"
                        );
                    }
                    for (i, (&m, &w)) in l.masked.iter().zip(&l.weights).enumerate() {
                        assert!(m != MASKED || w == 0.0, "{name}: masked weight {i} = {w}");
                    }
                }
                for row in trace.probs.chunks(v) {
                    let s: f64 = row.iter().map(|&x| x as f64).sum();
                    assert!((s - 1.0).abs() <= 1e-5, "{name}: probs row sums to {s}");
                }
            }
        }
    }
}
