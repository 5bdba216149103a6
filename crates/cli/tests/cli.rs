//! The `attnlab` binary on a generated model folder.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use attnlab_model::testing::write_model_dir;
use attnlab_model::{Bundle, LnPlacement};
use serde_json::Value;

const LESSON: &str = "나는 어제 산 커피를 오늘 마셨다";

fn model_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("model");
    write_model_dir(&dir, LnPlacement::Post, 42).unwrap();
    (tmp, dir)
}

fn attnlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .arg("--model")
        .arg(dir)
        .args(args)
        .env_remove("ATTNLAB_MODEL")
        .output()
        .unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn fails_cleanly(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.starts_with("error:") && err.contains(needle),
        "stderr: {err}"
    );
    assert!(!err.contains("panicked"));
}

#[test]
fn table_shows_korean_tokens_and_rows_that_sum_to_one() {
    let (_tmp, dir) = model_dir();
    let s = ok(&attnlab(
        &dir,
        &[
            "trace", LESSON, "--layer", "1", "--head", "2", "--format", "table",
        ],
    ));
    assert!(
        s.contains("산‹1-2/3›") && s.contains("커") && !s.contains('\u{FFFD}'),
        "{s}"
    );
    assert!(s.contains("layer 1 head 2"));
    let sums: Vec<f64> = s
        .lines()
        .skip_while(|l| !l.contains("attention weights"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().last().unwrap().parse().unwrap())
        .collect();
    assert!(sums.len() > 10, "{s}");
    assert!(sums.iter().all(|&x| (x - 1.0).abs() < 1e-4), "{sums:?}");
}

#[test]
fn json_matches_the_library_and_marks_the_masked_triangle() {
    let (_tmp, dir) = model_dir();
    let v: Value = serde_json::from_str(&ok(&attnlab(
        &dir,
        &["trace", LESSON, "--layer", "0", "--format", "json"],
    )))
    .unwrap();
    let (_, tr) = Bundle::load_dir(&dir)
        .unwrap()
        .trace(LESSON, &Default::default())
        .unwrap();
    let heads = v["heads"].as_array().unwrap();
    assert_eq!(heads.len(), 4);
    let t = v["tokens"].as_array().unwrap().len();
    assert_eq!(t, tr.dims.t);
    for (h, head) in heads.iter().enumerate() {
        let w = head["weights"].as_array().unwrap();
        for i in 0..t {
            for j in 0..t {
                let x = w[i][j].as_f64().unwrap() as f32;
                assert_eq!(x, tr.head(0, h).weights[i * t + j]);
                assert_eq!(head["masked"][i][j].is_null(), j > i);
            }
        }
    }
    assert_eq!(v["next"].as_array().unwrap().len(), 5);
}

/// `thumbnails`: every head pooled (here 2 × 2 cells of 8 positions from a text of more),
/// equal to the library's, rows of cells summing to 1; one head asked, one head printed.
#[test]
fn thumbnails_are_the_librarys_pooled_heads() {
    let (_tmp, dir) = model_dir();
    let v: Value =
        serde_json::from_str(&ok(&attnlab(&dir, &["thumbnails", LESSON, "--side", "2"]))).unwrap();
    let (_, tr) = Bundle::load_dir(&dir)
        .unwrap()
        .trace(LESSON, &Default::default())
        .unwrap();
    let th = tr.thumbnails(2).unwrap();
    assert!(tr.dims.t > 2 && th.span > 1);
    assert_eq!(
        (v["span"].as_u64(), v["cells"].as_u64()),
        (Some(th.span as u64), Some(th.cells as u64))
    );
    let heads = v["heads"].as_array().unwrap();
    assert_eq!(heads.len(), tr.dims.n_layer * tr.dims.n_head);
    for head in heads {
        let (l, h) = (
            head["layer"].as_u64().unwrap() as usize,
            head["head"].as_u64().unwrap() as usize,
        );
        let rows = head["weights"].as_array().unwrap();
        for (r, row) in rows.iter().enumerate() {
            let cells: Vec<f32> = row
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            assert_eq!(cells, th.head(l, h)[r * th.cells..(r + 1) * th.cells]);
            assert!((cells.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        // its text roles: the whole map's (`roles::head_scores`), read from the same rows
        let whole = attnlab_model::roles::head_scores(tr.head(l, h).weights, tr.dims.t, true);
        for r in attnlab_model::roles::TEXT_ROLES {
            let shown = head["roles"][r.code()].as_f64().map(|x| x as f32);
            assert_eq!(shown, whole.get(r), "{l}.{h} {}", r.code());
        }
    }
    let one: Value = serde_json::from_str(&ok(&attnlab(
        &dir,
        &["thumbnails", LESSON, "--layer", "1", "--head", "2"],
    )))
    .unwrap();
    assert_eq!(one["heads"].as_array().unwrap().len(), 1);
    assert_eq!(
        one["span"].as_u64(),
        Some(1),
        "a short text: one position a cell"
    );
    fails_cleanly(
        &attnlab(&dir, &["thumbnails", LESSON, "--layer", "9"]),
        "no layer 9",
    );
    fails_cleanly(
        &attnlab(&dir, &["thumbnails", LESSON, "--side", "0"]),
        "at least one cell",
    );
}

#[test]
fn csv_has_one_line_per_pair() {
    let (_tmp, dir) = model_dir();
    let s = ok(&attnlab(
        &dir,
        &["trace", "coffee or tea", "--format", "csv"],
    ));
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "layer,head,query,key,query_token,key_token,score,scaled,masked,weight"
    );
    let t = lines.iter().filter(|l| l.starts_with("0,0,0,")).count();
    assert_eq!(lines.len(), 1 + 2 * 4 * t * t);
    assert!(
        lines.iter().any(|l| l.contains(",-inf,0")),
        "masked entries are -inf with weight 0"
    );
}

#[test]
fn attention_options_reach_the_output() {
    let (_tmp, dir) = model_dir();
    let json = |extra: &[&str]| -> Value {
        let mut args = vec![
            "trace",
            "coffee tea",
            "--layer",
            "1",
            "--head",
            "0",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&attnlab(&dir, &args))).unwrap()
    };
    let base = json(&[]);
    let no_mask = json(&["--no-mask"]);
    assert!(no_mask["heads"][0]["weights"][0][1].as_f64().unwrap() > 0.0);
    assert_eq!(base["heads"][0]["weights"][0][1].as_f64().unwrap(), 0.0);
    let ablated = json(&["--ablate", "0.1,0.3"]);
    assert_ne!(
        ablated["heads"][0]["weights"], base["heads"][0]["weights"],
        "layer 1 sees layer 0's ablation"
    );
    let unscaled = json(&["--no-scale"]);
    assert_eq!(
        unscaled["heads"][0]["scaled"],
        unscaled["heads"][0]["scores"]
    );
    assert_eq!(
        json(&["--temperature", "0.5"])["options"]["temperature"],
        0.5
    );
}

#[test]
fn predict_lists_top_k() {
    let (_tmp, dir) = model_dir();
    let s = ok(&attnlab(&dir, &["predict", LESSON, "--top", "3"]));
    assert_eq!(s.lines().count(), 3, "{s}");
    assert!(s.lines().next().unwrap().trim_start().starts_with("1."));
    let v: Value = serde_json::from_str(&ok(&attnlab(
        &dir,
        &["predict", "tea", "--top", "4", "--format", "json"],
    )))
    .unwrap();
    let probs: Vec<f64> = v["next"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["prob"].as_f64().unwrap())
        .collect();
    assert_eq!(probs.len(), 4);
    assert!(probs.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn heatmap_writes_a_labelled_png() {
    let (tmp, dir) = model_dir();
    let png = tmp.path().join("h.png");
    let out = attnlab(
        &dir,
        &[
            "heatmap",
            LESSON,
            "--layer",
            "1",
            "--head",
            "3",
            "-o",
            png.to_str().unwrap(),
        ],
    );
    ok(&out);
    let img = image::open(&png).unwrap().to_rgba8();
    let t = Bundle::load_dir(&dir)
        .unwrap()
        .tokenizer
        .encode(LESSON)
        .unwrap()
        .len() as u32;
    let grid = (40 * t).min(700); // cells shrink for long inputs
    assert!(
        img.width() > grid && img.height() > grid,
        "{}x{} for {t} tokens",
        img.width(),
        img.height()
    );
    let has_cjk_font = Path::new("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc").exists();
    // dark ink in the left margin = query labels were drawn
    let ink = (0..img.height())
        .flat_map(|y| (0..40).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0[0] < 100)
        .count();
    if has_cjk_font {
        assert!(ink > 50, "expected token labels, found {ink} dark pixels");
    } else {
        assert!(String::from_utf8_lossy(&out.stderr).contains("no font with Hangul"));
    }
}

#[test]
fn errors_are_messages_not_panics() {
    let (_tmp, dir) = model_dir();
    fails_cleanly(
        &attnlab(&dir, &["trace", "", "--format", "table"]),
        "no tokens",
    );
    fails_cleanly(
        &attnlab(&dir, &["trace", "tea", "--layer", "9"]),
        "layer 9 does not exist",
    );
    fails_cleanly(
        &attnlab(&dir, &["trace", "tea", "--temperature", "0"]),
        "temperature",
    );
    fails_cleanly(
        &attnlab(&dir, &["trace", "tea", "--ablate", "5.0"]),
        "cannot ablate head 5.0",
    );
    fails_cleanly(
        &attnlab(&dir.join("nope"), &["predict", "tea"]),
        "config.json",
    );
    std::fs::write(dir.join("model.safetensors"), b"garbage").unwrap();
    fails_cleanly(&attnlab(&dir, &["predict", "tea"]), "safetensors");
    let bad = Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(["trace", "x", "--ablate", "zz"])
        .output()
        .unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("LAYER.HEAD"));
}

#[test]
fn without_a_model_flag_the_bundled_model_is_used_or_its_absence_explained() {
    let out = Command::new(env!("CARGO_BIN_EXE_attnlab"))
        .args(["predict", "tea"])
        .env_remove("ATTNLAB_MODEL")
        .output()
        .unwrap();
    let bundled =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/model/model.safetensors");
    if bundled.exists() {
        ok(&out);
    } else {
        fails_cleanly(&out, "no bundled model is present");
    }
}

/// The bad-text corpus through `attnlab trace -` (text on standard input, so NUL and
/// control characters arrive intact): a result or a one-line error, never a panic.
#[test]
fn bad_text_gives_json_or_a_clear_error() {
    use std::io::Write;
    use std::process::Stdio;
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/data/bad-text.json");
    let cases: Vec<Value> = serde_json::from_slice(&std::fs::read(corpus).unwrap()).unwrap();
    assert!(cases.len() >= 50);
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/model");
    for c in &cases {
        let name = c["name"].as_str().unwrap();
        let mut text = c["text"].as_str().unwrap().to_string();
        if let Some(n) = c["repeat_to_chars"].as_u64() {
            text = text.chars().cycle().take(n as usize).collect();
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_attnlab"))
            .args([
                "--model",
                model.to_str().unwrap(),
                "trace",
                "-",
                "--layer",
                "0",
                "--head",
                "0",
            ])
            .args(["--format", "json"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        match out.status.code() {
            Some(0) => {
                let v: Value =
                    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(
                    v["tokens"].as_array().is_some_and(|t| !t.is_empty()),
                    "{name}"
                );
            }
            Some(1) => assert!(
                !err.trim().is_empty() && text.trim().is_empty(),
                "{name}: {err}"
            ),
            other => panic!("{name}: exit {other:?}: {err}"),
        }
    }
}

#[test]
fn heads_scores_match_the_library_for_a_text_and_average_a_corpus() {
    use attnlab_model::roles::{text_scores, Probe, Role, PROBE_SEED};
    let (tmp, dir) = model_dir();
    let b = Bundle::load_dir(&dir).unwrap();
    let json = |args: &[&str]| -> Value {
        serde_json::from_str(&ok(&attnlab(
            &dir,
            &[&["heads", "--format", "json"], args].concat(),
        )))
        .unwrap()
    };
    let lib = |text: &str| {
        let (_, tr) = b.trace(text, &Default::default()).unwrap();
        text_scores(&tr)
    };
    let probe = Probe::new(&b.tokenizer, 32, PROBE_SEED, 64);
    let probe_scores =
        probe.scores(&attnlab_model::forward(&b.model, &probe.ids, &Default::default()).unwrap());
    let close = |v: &Value, x: Option<f32>| match x {
        Some(x) => (v.as_f64().unwrap() as f32 - x).abs() < 1e-6,
        None => v.is_null(),
    };

    let one = json(&[LESSON]);
    let heads = one["heads"].as_array().unwrap();
    assert_eq!(heads.len(), 8, "2 layers × 4 heads");
    let expected = lib(LESSON);
    for (i, h) in heads.iter().enumerate() {
        assert_eq!(
            (h["layer"].as_u64(), h["head"].as_u64()),
            (Some(i as u64 / 4), Some(i as u64 % 4))
        );
        for role in Role::ALL {
            let want = if role.needs_probe() {
                probe_scores[i].get(role)
            } else {
                expected[i].get(role)
            };
            assert!(
                close(&h["scores"][role.code()], want),
                "head {i} {role:?}: {} vs {want:?}",
                h["scores"][role.code()]
            );
            let v = h["scores"][role.code()].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v));
        }
    }
    // the fixture's vocabulary has fewer usable tokens than the default probe asks for
    assert!(one["probe"]["clamped"]
        .as_str()
        .unwrap()
        .contains("usable tokens"));
    assert_eq!(
        one["probe"]["tokens_per_copy"].as_u64(),
        Some(probe.half as u64)
    );

    // a corpus of two lines gives the mean of the two texts
    let corpus = tmp.path().join("corpus.txt");
    std::fs::write(&corpus, "나는 어제 산 커피를\n\n coffee tea 마셨다 나는\n").unwrap();
    let avg = json(&["--corpus", corpus.to_str().unwrap()]);
    assert_eq!(avg["texts"].as_u64(), Some(2));
    let (a, c) = (lib("나는 어제 산 커피를"), lib("coffee tea 마셨다 나는"));
    for (i, h) in avg["heads"].as_array().unwrap().iter().enumerate() {
        let want = (a[i].get(Role::Previous).unwrap() + c[i].get(Role::Previous).unwrap()) / 2.0;
        assert!(close(&h["scores"]["previous"], Some(want)), "head {i}");
    }

    // the table has the same numbers, three decimals
    let table = ok(&attnlab(&dir, &["heads", LESSON]));
    let row = table.lines().nth(2).unwrap();
    assert!(
        row.starts_with(&format!(
            "| 0 | 0 | {:.3} |",
            expected[0].get(Role::Previous).unwrap()
        )),
        "{row}"
    );
}

#[test]
fn heads_says_what_it_did_with_bad_or_long_input() {
    let (tmp, dir) = model_dir();
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "\n  \n").unwrap();
    fails_cleanly(
        &attnlab(&dir, &["heads", "--corpus", empty.to_str().unwrap()]),
        "the corpus is empty",
    );
    let binary = tmp.path().join("model.bin");
    std::fs::write(&binary, [0u8, 159, 146, 150, 0, 1]).unwrap();
    fails_cleanly(
        &attnlab(&dir, &["heads", "--corpus", binary.to_str().unwrap()]),
        "not UTF-8 text",
    );
    fails_cleanly(
        &attnlab(&dir, &["heads", "--corpus", "/nonexistent/x.txt"]),
        "/nonexistent/x.txt",
    );
    // a line longer than the context (64) is cut, and said so
    let long = tmp.path().join("long.txt");
    std::fs::write(&long, format!("{}\n나는 커피\n", "나는 어제 ".repeat(40))).unwrap();
    let out = attnlab(
        &dir,
        &[
            "heads",
            "--corpus",
            long.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["truncated"].as_u64(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 of 2 texts were longer than the context"),
        "{err}"
    );
    // a probe longer than the context is clamped, and said so
    let out = attnlab(&dir, &["heads", "--probe-len", "500"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("probe shortened from 500") && err.contains("context of 64"),
        "{err}"
    );
    // valid UTF-8 with NUL bytes is a binary file too
    let nul = tmp.path().join("nul.txt");
    std::fs::write(&nul, "나는\0커피\n").unwrap();
    fails_cleanly(
        &attnlab(&dir, &["heads", "--corpus", nul.to_str().unwrap()]),
        "not UTF-8 text",
    );
}

#[test]
fn lens_flow_and_generate_agree_with_the_library() {
    use attnlab_model::sample::Sampling;
    let (_tmp, dir) = model_dir();
    let b = Bundle::load_dir(&dir).unwrap();
    let json =
        |args: &[&str]| -> Value { serde_json::from_str(&ok(&attnlab(&dir, args))).unwrap() };

    // the lens's last stage is the model's own prediction
    let lens = json(&["lens", LESSON, "--top", "3", "--format", "json"]);
    let (_, tr) = b.trace(LESSON, &Default::default()).unwrap();
    let stages = lens["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 1 + b.model.config.n_layer);
    let last = stages.last().unwrap();
    assert_eq!(last["target_rank"].as_u64(), Some(0));
    assert_eq!(
        last["top"][0]["id"].as_u64(),
        Some(tr.top_k(tr.dims.t - 1, 1)[0].0 as u64)
    );
    assert_eq!(
        lens["normalised"], "block-outputs",
        "the fixture is post-LN without ln_f"
    );

    // flow: one row per layer over the input tokens, each summing to 1
    for method in ["rollout", "value", "raw"] {
        let f = json(&["flow", LESSON, "--method", method, "--query", "3"]);
        let layers = f["layers"].as_array().unwrap();
        assert_eq!(layers.len(), b.model.config.n_layer);
        for row in layers {
            let s: f64 = row
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .sum();
            assert!((s - 1.0).abs() < 1e-4, "{method}: {s}");
        }
        assert_eq!(f["approximation"].as_bool(), Some(method == "rollout"));
    }
    let csv = ok(&attnlab(&dir, &["flow", "나는 커피", "--format", "csv"]));
    assert!(csv.starts_with("layer,key,token,contribution\n"));

    // generation = the library's generate with the same settings, token for token: greedy
    // (the argmax chain) and seeded sampling, with the number of steps asked for
    let generated = |args: &[&str], steps: usize, sampling: Sampling| {
        let steps_arg = steps.to_string();
        let mut all = vec![
            "generate", "나는", "--steps", &steps_arg, "--format", "json",
        ];
        all.extend_from_slice(args);
        let ids: Vec<u32> = json(&all)["generated"]
            .as_array()
            .expect("a list of generated tokens")
            .iter()
            .map(|t| t["id"].as_u64().unwrap() as u32)
            .collect();
        let lib = attnlab_model::sample::generate(
            &b.model,
            &b.tokenizer.ids("나는").unwrap(),
            steps,
            &sampling,
            &Default::default(),
            |_| {},
        )
        .unwrap();
        assert_eq!(ids.len(), steps, "{args:?}");
        assert_eq!(ids, lib.ids, "{args:?}");
    };
    let greedy = Sampling {
        greedy: true,
        ..Default::default()
    };
    generated(&["--greedy"], 4, greedy);
    let seeded = Sampling {
        seed: 7,
        top_k: Some(5),
        ..Default::default()
    };
    generated(&["--seed", "7", "--top-k", "5"], 6, seeded);

    // bad input: clear errors, and the context limit is said
    fails_cleanly(
        &attnlab(&dir, &["generate", "나는", "--temperature=-1"]),
        "output temperature",
    );
    fails_cleanly(
        &attnlab(&dir, &["generate", "", "--steps", "2"]),
        "no tokens",
    );
    fails_cleanly(
        &attnlab(&dir, &["lens", "나는", "--pos", "9"]),
        "position 9 is past",
    );
    fails_cleanly(
        &attnlab(&dir, &["flow", "나는", "--query", "9"]),
        "query 9 is past",
    );
    let long = "나는 어제 ".repeat(40);
    let out = attnlab(&dir, &["generate", &long, "--steps", "3", "--greedy"]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("fills the context of 64"));
}
