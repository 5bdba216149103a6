//! The malformed-model corpus (tests/data/malformed, written by
//! `cargo run -p attnlab-model --example malformed_corpus -- crates/model/tests/data/malformed`):
//! each case is rejected with an error naming the problem (the words in its expect.txt);
//! the valid model next to them loads.

use std::path::PathBuf;

use attnlab_model::{AttentionOptions, Bundle};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/malformed")
}

#[test]
fn every_malformed_model_is_rejected_with_an_error_that_names_the_problem() {
    let mut cases = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(expect) = std::fs::read_to_string(dir.join("expect.txt")) else {
            continue;
        };
        cases += 1;
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let err = Bundle::load_dir(&dir)
            .map(|_| ())
            .expect_err(&format!("{name} must be rejected"))
            .to_string();
        for word in expect.lines().filter(|l| !l.is_empty()) {
            assert!(
                err.contains(word),
                "{name}: {err:?} does not mention {word:?}"
            );
        }
    }
    assert!(cases >= 20, "{cases} cases");
}

#[test]
fn the_valid_model_of_the_corpus_loads_and_runs() {
    let b = Bundle::load_dir(&corpus().join("valid")).unwrap();
    let (tokens, trace) = b
        .trace("나는 커피를 마셨다", &AttentionOptions::default())
        .unwrap();
    assert!(!tokens.is_empty() && trace.probs.iter().all(|p| p.is_finite()));
}
