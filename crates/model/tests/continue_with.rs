//! A generation's tokens appended to a text (`Tokenizer::continue_with`), with the bundled
//! tokenizer: the ids are exactly the text's and then the appended ones, the text is what
//! they spell, and every span points at its token's characters.

use std::path::PathBuf;

use attnlab_model::Bundle;

fn bundled() -> Bundle {
    Bundle::load_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/model")).unwrap()
}

#[test]
fn appended_ids_are_kept_exactly_and_spelled_out() {
    let b = bundled();
    let tok = &b.tokenizer;
    let base = "나는 오늘 아침에";
    let whole = "나는 오늘 아침에 커피를 마셨다";
    let base_ids = tok.ids(base).unwrap();
    let whole_ids = tok.ids(whole).unwrap();
    assert_eq!(
        &whole_ids[..base_ids.len()],
        &base_ids[..],
        "the test's premise"
    );
    let appended = &whole_ids[base_ids.len()..];
    let (text, infos) = tok.continue_with(base, appended).unwrap();
    assert_eq!(text, whole);
    assert_eq!(
        format!("{base}{}", tok.spell(appended).unwrap()),
        whole,
        "spell: the same text, nothing tokenized"
    );
    let ids: Vec<u32> = infos.iter().map(|t| t.id).collect();
    assert_eq!(ids, whole_ids);
    // the spans are the ones encoding the whole text gives
    let direct = tok.encode(whole).unwrap();
    for (a, d) in infos.iter().zip(&direct) {
        assert_eq!(
            (a.span, &a.display, a.partial),
            (d.span, &d.display, d.partial)
        );
    }
    // nothing appended: the text and its own tokens
    let (same, own) = tok.continue_with(base, &[]).unwrap();
    assert_eq!((same.as_str(), own.len()), (base, base_ids.len()));
    // an id the vocabulary does not have is an error, not a panic
    let e = tok
        .continue_with(base, &[u32::MAX])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no token with id"), "{e}");
}

#[test]
fn a_token_that_is_part_of_a_character_is_marked_and_replaced_until_completed() {
    let b = bundled();
    let tok = &b.tokenizer;
    // a single-byte token holding the first byte of a three-byte Hangul syllable (the
    // bundled vocabulary has byte fallback)
    let first = "산".as_bytes()[0];
    let id = (0..tok.vocab_size() as u32)
        .find(|&id| {
            tok.inner()
                .id_to_token(id)
                .is_some_and(|p| tok.piece_bytes(&p) == [first])
        })
        .expect("a byte token for the first byte of 산");
    let (text, infos) = tok.continue_with("a", &[id]).unwrap();
    assert_eq!(text, "a\u{fffd}");
    let last = infos.last().unwrap();
    assert!(last.partial, "{last:?}");
    assert_eq!(last.span, (1, 2));
}
