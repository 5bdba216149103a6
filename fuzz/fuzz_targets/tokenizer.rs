//! The tokenizers (the bundled char-level BPE and a byte-level GPT-2 style one) and the
//! display-string mapping on arbitrary text: tokens cover the text in order, every display
//! string is non-empty and shows no U+FFFD the text did not have.
#![no_main]

use std::sync::OnceLock;

use attnlab_model::testing::lesson_tokenizer_json;
use attnlab_model::Tokenizer;
use libfuzzer_sys::fuzz_target;

fn tokenizers() -> &'static [Tokenizer; 2] {
    static T: OnceLock<[Tokenizer; 2]> = OnceLock::new();
    T.get_or_init(|| {
        [
            Tokenizer::from_bytes(include_bytes!("../../assets/model/tokenizer.json")).unwrap(),
            Tokenizer::from_bytes(lesson_tokenizer_json().as_bytes()).unwrap(),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let chars = text.chars().count();
    for tok in tokenizers() {
        let Ok(tokens) = tok.encode(&text) else { continue };
        let mut last_start = 0;
        for t in &tokens {
            assert!(!t.display.is_empty(), "{t:?}");
            assert!(t.span.0 <= t.span.1 && t.span.1 <= chars, "{t:?} in {chars} chars");
            assert!(t.span.0 >= last_start, "spans go backwards: {t:?}");
            last_start = t.span.0;
            if !text.contains('\u{fffd}') {
                assert!(!t.display.contains('\u{fffd}'), "{t:?}");
            }
            assert!((t.id as usize) < tok.vocab_size());
        }
    }
});
