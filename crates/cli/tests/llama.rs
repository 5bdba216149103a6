//! `attnlab --model` on Llama-family models: every command on
//! SmolLM2-135M-Instruct's GGUF file (fetched by the test command: scripts/lib.sh
//! `ensure_smollm2`) and on a Hugging Face folder (a fixture of the model crate), and clear
//! refusals of what they do not do yet.

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
        (next[0]["id"].as_u64(), next[0]["display"].as_str()),
        (Some(7042), Some("␣Paris"))
    );
    assert!(next[0]["prob"].as_f64().unwrap() > 0.5);
    // the attention options act inside the forward: they change the prediction
    let top = |extra: &[&str]| {
        let mut args = vec!["predict", "The capital of France is", "--top", "1"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--format", "json"]);
        let out = attnlab(&model, &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["next"][0]["prob"].as_f64().unwrap()
    };
    let plain = top(&[]);
    assert_eq!(top(&["--temperature", "1"]), plain);
    for other in [
        &["--temperature", "2"][..],
        &["--no-scale"],
        &["--no-mask"],
        &["--ablate", "18.6,16.0"],
    ] {
        let p = top(other);
        assert!((p - plain).abs() > 1e-3, "{other:?}: {p} against {plain}");
    }
    let out = attnlab(&model, &["predict", "x", "--ablate", "30.0"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot ablate head 30.0"));
    // what GGUF models do not do yet is refused, by name
    // generation continues the text greedily, each step's trace reusing the last one's rows
    let g = json_of(
        &model,
        &[
            "generate",
            "The capital of France is",
            "--steps",
            "3",
            "--greedy",
            "--format",
            "json",
        ],
    );
    let first = &g["generated"][0];
    assert_eq!(
        (first["id"].as_u64(), first["display"].as_str()),
        (Some(7042), Some("␣Paris"))
    );
    assert_eq!(g["generated"].as_array().unwrap().len(), 3);
}

fn json_of(model: &PathBuf, args: &[&str]) -> Value {
    let out = attnlab(model, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `trace`, `lens`, `flow` and `heatmap` read SmolLM2 through the traced Llama forward.
#[test]
#[ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf (the test command fetches it)"]
fn the_inspecting_commands_read_smollm2() {
    let model = smollm2();
    let text = "The capital of France is";
    // the lens ends on the model's own prediction, through the final RMSNorm
    let lens = json_of(&model, &["lens", text, "--format", "json"]);
    assert_eq!(lens["target"]["display"], "␣Paris");
    assert_eq!(lens["normalised"], "final-rms-norm");
    let stages = lens["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 31, "the embedding and 30 blocks");
    assert_eq!(stages[30]["target_rank"], 0);
    // one head's weights: a 5 × 5 lower-triangular matrix of rows summing to 1
    let tr = json_of(
        &model,
        &[
            "trace", text, "--layer", "18", "--head", "6", "--format", "json",
        ],
    );
    assert_eq!(tr["dims"]["n_head"], 9);
    assert_eq!(tr["dims"]["d_k"], 64);
    let w = tr["heads"][0]["weights"].as_array().unwrap();
    assert_eq!(w.len(), 5);
    for (i, row) in w.iter().enumerate() {
        let row: Vec<f64> = row
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-4);
        assert!(row[i + 1..].iter().all(|&x| x == 0.0));
    }
    assert_eq!(tr["next"][0]["display"], "␣Paris");
    // a whole trace too large for the memory (≈ 1,100 tokens: 7 GB of maps) is refused with
    // the size it would take, before any of it is allocated
    let long = "the cat sat on the mat and ".repeat(160);
    let out = attnlab(&model, &["trace", "--full", "--format", "json", &long]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("GB") && err.contains("--layer L --head H"),
        "{err}"
    );
    // one head at that length is computed from the queries and keys: the induction head
    // L18H6 puts most of the last row's weight on the tokens that followed the last token's
    // earlier copies
    let tr = json_of(
        &model,
        &[
            "trace",
            "--layer",
            "18",
            "--head",
            "6",
            "--format",
            "json",
            long.trim_end(),
        ],
    );
    let ids: Vec<u64> = tr["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_u64().unwrap())
        .collect();
    let t = ids.len();
    assert!(t > 1000, "{t} tokens");
    let w = &tr["heads"][0]["weights"];
    assert_eq!(w.as_array().unwrap().len(), t);
    let last: Vec<f64> = w[t - 1]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!((last.iter().sum::<f64>() - 1.0).abs() < 1e-4);
    let induction: f64 = (1..t)
        .filter(|&j| ids[j - 1] == ids[t - 1])
        .map(|j| last[j])
        .sum();
    assert!(
        induction > 0.5,
        "weight on the induction targets: {induction}"
    );
    let flow = json_of(&model, &["flow", text, "--format", "json"]);
    assert_eq!(flow["layers"].as_array().unwrap().len(), 30);
    let png = std::env::temp_dir().join(format!("attnlab-smollm2-{}.png", std::process::id()));
    let out = attnlab(
        &model,
        &[
            "heatmap",
            text,
            "--layer",
            "18",
            "--head",
            "6",
            "-o",
            png.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
    std::fs::remove_file(png).unwrap();
}

/// `heads` on SmolLM2 names the heads an independent numpy forward of the same file found
/// (issue 36): induction L18H6, L17H4, L17H3 and previous-token L16H0, L11H1, L2H1.
#[test]
#[ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf (the test command fetches it)"]
fn heads_finds_smollm2s_induction_and_previous_token_heads() {
    let text = "Which do you like better, coffee or tea? I like coffee better than tea, but my friend likes tea.";
    let out = attnlab(&smollm2(), &["heads", text, "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let heads = doc["heads"].as_array().unwrap();
    assert_eq!(heads.len(), 30 * 9);
    let best = |role: &str| -> Vec<(String, f64)> {
        let mut all: Vec<(String, f64)> = heads
            .iter()
            .map(|h| {
                (
                    format!("L{}H{}", h["layer"], h["head"]),
                    h["scores"][role].as_f64().unwrap_or(0.0),
                )
            })
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1));
        all.truncate(3);
        all
    };
    let names = |v: &[(String, f64)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    let induction = best("induction");
    assert_eq!(
        names(&induction),
        ["L18H6", "L17H4", "L17H3"],
        "{induction:?}"
    );
    assert!(induction[0].1 > 0.75, "{induction:?}");
    let previous = best("previous");
    assert_eq!(names(&previous), ["L16H0", "L11H1", "L2H1"], "{previous:?}");
    assert!(previous[0].1 > 0.65, "{previous:?}");
    let role = |name: &str| {
        heads
            .iter()
            .find(|h| format!("L{}H{}", h["layer"], h["head"]) == name)
            .unwrap()["role"]
            .clone()
    };
    assert_eq!(role("L18H6"), "induction");
    assert_eq!(role("L16H0"), "previous");
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
        err.contains("quants.gguf") && err.contains("general.architecture is \"attnlab-fixture\""),
        "{err}"
    );
    let out = attnlab(&PathBuf::from("/nonexistent/model.gguf"), &["predict", "x"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model.gguf"));
}

/// A Hugging Face Llama folder (the model crate's transformers fixture with a WordLevel
/// tokenizer): the CLI reads it, and its prediction is transformers' (tests/hf_reference.rs
/// checks the numbers).
#[test]
fn a_hugging_face_llama_folder_is_read() {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../model/tests/data/hf/llama-gqa-tied"
    ));
    let tr = json_of(
        &dir,
        &[
            "trace",
            "Which do you like better, coffee or tea?",
            "--layer",
            "1",
            "--head",
            "3",
            "--format",
            "json",
        ],
    );
    assert_eq!(tr["dims"]["n_head"], 4);
    assert_eq!(tr["tokens"].as_array().unwrap().len(), 10);
    let heads = json_of(
        &dir,
        &[
            "heads",
            "Which do you like better, coffee or tea?",
            "--format",
            "json",
        ],
    );
    assert_eq!(heads["heads"].as_array().unwrap().len(), 8);
    let g = json_of(
        &dir,
        &[
            "generate", "coffee", "--steps", "4", "--greedy", "--format", "json",
        ],
    );
    assert_eq!(g["generated"].as_array().unwrap().len(), 4);
}
