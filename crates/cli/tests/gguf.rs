//! `attnlab --model FILE.gguf`: `predict` on SmolLM2-135M-Instruct (fetched by the test
//! command: scripts/lib.sh `ensure_smollm2`), and clear refusals of what GGUF models do not
//! do yet.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn smollm2() -> PathBuf {
    std::env::var_os("ATTNLAB_SMOLLM2")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../target/models/SmolLM2-135M-Instruct.Q4_1.gguf"
            )
            .into()
        })
}

fn attnlab(model: &PathBuf, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .arg("--model")
        .arg(model)
        .args(args)
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf (the test command fetches it)"]
fn predict_reads_a_gguf_model() {
    let model = smollm2();
    assert!(
        model.is_file(),
        "{}: the test command fetches it",
        model.display()
    );
    let out = attnlab(
        &model,
        &[
            "predict",
            "The capital of France is",
            "--top",
            "3",
            "--format",
            "json",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<u64> = doc["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [504, 3575, 282, 4649, 314], "llama.cpp's tokens");
    let next = doc["next"].as_array().unwrap();
    assert_eq!(next.len(), 3);
    assert_eq!(
        (next[0]["id"].as_u64(), next[0]["text"].as_str()),
        (Some(7042), Some("␣Paris"))
    );
    assert!(next[0]["prob"].as_f64().unwrap() > 0.5);
    // what GGUF models do not do yet is refused, by name
    let out = attnlab(&model, &["trace", "x"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("only `predict` reads GGUF models so far")
    );
    let out = attnlab(&model, &["predict", "x", "--temperature", "2"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("do not apply to GGUF models yet"));
}

#[test]
fn a_gguf_without_a_model_is_refused_clearly() {
    let fixture = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../model/tests/data/quants.gguf"
    ));
    let out = attnlab(&fixture, &["predict", "x"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("quants.gguf") && err.contains("tokenizer.ggml.model"),
        "{err}"
    );
    let out = attnlab(&PathBuf::from("/nonexistent/model.gguf"), &["predict", "x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model.gguf"));
}
