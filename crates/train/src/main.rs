//! `attnlab-train`: builds the bundled model's tokenizer, trains the model, and writes the
//! files of assets/model/.
//!
//! ```sh
//! python3 corpus/build_corpus.py                       # data/corpus/{train,valid}.txt
//! cargo run -p attnlab-train --release -- tokenizer    # assets/model/tokenizer.json
//! cargo run -p attnlab-train --release -- train        # config.json, model.safetensors, logs
//! cargo run -p attnlab-train --release -- card --baseline DIR   # head roles, the fixed-set comparison, README.md
//! ```

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use attnlab_model::{Bundle, Config, Tokenizer};
use attnlab_train::run::{Hyper, Trainer};
use attnlab_train::{analysis, card, data, plot, tokenizer};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "attnlab-train", about = "Train attnlab's bundled model")]
struct Cli {
    /// Corpus folder written by corpus/build_corpus.py
    #[arg(long, global = true, default_value = "data/corpus")]
    corpus: PathBuf,
    /// Model folder to write
    #[arg(long, global = true, default_value = "assets/model")]
    model_dir: PathBuf,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Train the tokenizer (BPE over Hangul syllables + ASCII with byte fallback).
    Tokenizer {
        #[arg(long, default_value_t = 6000)]
        vocab: usize,
    },
    /// Train the model.
    Train {
        #[arg(long, default_value_t = 1234)]
        seed: u64,
        #[arg(long, default_value_t = 1800)]
        steps: usize,
        #[arg(long, default_value_t = 16)]
        batch: usize,
        #[arg(long, default_value_t = 8e-4)]
        lr: f64,
        #[arg(long, default_value_t = 300)]
        warmup: usize,
        #[arg(long, default_value_t = 50)]
        eval_every: usize,
        #[arg(long, default_value_t = 100)]
        ckpt_every: usize,
        /// Checkpoint folder; an existing checkpoint there is resumed
        #[arg(long, default_value = "data/ckpt")]
        ckpt: PathBuf,
        /// Start afresh even if a checkpoint exists
        #[arg(long)]
        fresh: bool,
        /// Stop after this many steps of this invocation (resume later); the weights so far are written to the model folder
        #[arg(long)]
        stop_after: Option<usize>,
        /// Standard deviation of the embeddings at init (GPT-2: 0.02)
        #[arg(long, default_value_t = 0.02)]
        emb_std: f64,
        /// No weight decay on the token and position embeddings
        #[arg(long)]
        no_embedding_decay: bool,
        /// Standard deviation of the position embedding at init, when it should differ from
        /// --emb-std (with scale_embedding the token rows are × √d_model at the input)
        #[arg(long, conflicts_with = "pos_sinusoid")]
        pos_std: Option<f64>,
        /// Start the position embedding as the original Transformer's sinusoid table (still
        /// learned) instead of random
        #[arg(long)]
        pos_sinusoid: bool,
        /// Blocks of the model (the bundled shape: 4); fewer for a short probe run of how
        /// heads form
        #[arg(long)]
        layers: Option<usize>,
    },
    /// Analyse the trained model's heads and write the model card.
    Card {
        /// Earlier models measured beside this one on the fixed set, each `NAME=DIR` or `DIR`
        /// (then named by its path); repeatable. The first one's loss curve is
        /// copied beside this model's (`loss-curve-previous.png`).
        #[arg(long)]
        baseline: Vec<String>,
    },
    /// A model's loss on a text file (one paragraph per line), by attnlab's own forward pass.
    Eval {
        /// The text to measure on
        file: PathBuf,
        /// At most this many windows of context + 1 tokens from the start (48: the trainer's
        /// validation measure)
        #[arg(long, default_value_t = usize::MAX)]
        windows: usize,
    },
}

/// Run 1's validation lines, frozen for comparisons.
const FIXED_SET: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../corpus/fixed-valid-v1.txt"
);

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn fmt_secs(s: f64) -> String {
    format!(
        "{}:{:02}:{:02}",
        s as u64 / 3600,
        s as u64 / 60 % 60,
        s as u64 % 60
    )
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Cmd::Eval { file, windows } => eval(&cli.model_dir, &file, windows),
        Cmd::Tokenizer { vocab } => {
            let train = cli.corpus.join("train.txt");
            let t0 = Instant::now();
            let json = tokenizer::train(&[train.display().to_string()], vocab)?;
            let out = cli.model_dir.join("tokenizer.json");
            tokenizer::save(&json, &out).map_err(|e| e.to_string())?;
            let tok = Tokenizer::from_bytes(json.as_bytes()).map_err(|e| e.to_string())?;
            let (per_syl, per_word) =
                tokenizer::efficiency(&tok, &read(&cli.corpus.join("valid.txt"))?);
            let stats = serde_json::json!({"vocab_size": tok.vocab_size(), "tokens_per_hangul_syllable": per_syl,
                "tokens_per_english_word": per_word, "seconds": t0.elapsed().as_secs_f64()});
            std::fs::write(
                cli.model_dir.join("tokenizer-stats.json"),
                serde_json::to_string_pretty(&stats).unwrap(),
            )
            .map_err(|e| e.to_string())?;
            println!("wrote {} ({} ids) in {:.1}s; held-out: {per_syl:.3} tokens per Hangul syllable, {per_word:.3} per English word",
                out.display(), tok.vocab_size(), t0.elapsed().as_secs_f64());
            Ok(())
        }
        Cmd::Train {
            seed,
            steps,
            batch,
            lr,
            warmup,
            eval_every,
            ckpt_every,
            ckpt,
            fresh,
            stop_after,
            emb_std,
            no_embedding_decay,
            pos_std,
            pos_sinusoid,
            layers,
        } => {
            // glibc: fewer mmap/munmap round trips for candle's many temporary buffers
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                libc::mallopt(libc::M_TOP_PAD, 256 << 20);
                libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
            }
            let tok_bytes = std::fs::read(cli.model_dir.join("tokenizer.json"))
                .map_err(|e| format!("tokenizer.json: {e} (run the tokenizer command first)"))?;
            let tok = Tokenizer::from_bytes(&tok_bytes).map_err(|e| e.to_string())?;
            eprintln!("tokenizing the corpus…");
            let train = data::encode_lines(&tok, &read(&cli.corpus.join("train.txt"))?)?;
            let valid = data::encode_lines(&tok, &read(&cli.corpus.join("valid.txt"))?)?;
            eprintln!(
                "train {} tokens, validation {} tokens",
                train.len(),
                valid.len()
            );
            let mut config = Config::bundled(tok.vocab_size());
            if let Some(n) = layers {
                config.n_layer = n;
                config.validate().map_err(|e| e.to_string())?;
            }
            let hyper = Hyper {
                seed,
                steps,
                batch,
                seq: config.n_positions,
                lr,
                lr_floor: 0.1,
                warmup,
                weight_decay: 0.1,
                clip: 1.0,
                eval_every,
                eval_windows: 48,
                ckpt_every,
                emb_std,
                pos_std,
                pos_sinusoid,
                decay_embeddings: !no_embedding_decay,
            };
            let mut trainer = Trainer::new(&config, hyper.clone()).map_err(|e| e.to_string())?;
            if !fresh && trainer.load_checkpoint(&ckpt).map_err(|e| e.to_string())? {
                eprintln!("resumed from {} at step {}", ckpt.display(), trainer.step());
            }
            let first = trainer.step();
            trainer.log.schedule(first, steps);
            // the corpus as its script's flags, for the card's recipe (a corpus folder made
            // without the script has no manifest, and nothing is recorded)
            if let Ok(m) = std::fs::read_to_string(cli.corpus.join("manifest.json")) {
                let m: serde_json::Value = serde_json::from_str(&m)
                    .map_err(|e| format!("{}: {e}", cli.corpus.join("manifest.json").display()))?;
                trainer
                    .log
                    .corpus(first, &card::corpus_flags(&m["settings"]));
            }
            let until = stop_after.map_or(steps, |n| first + n);
            let tty = std::io::stderr().is_terminal();
            let wall = Instant::now();
            trainer
                .train(&train, &valid, until, Some(&ckpt), |t, loss, lr, norm| {
                    let s = t.step();
                    let rate = (s - first) as f64 / wall.elapsed().as_secs_f64();
                    let eta = (steps - s) as f64 / rate.max(1e-9);
                    let tps = t.log.tokens_seen as f64 / t.log.seconds;
                    let bar = "#".repeat(30 * s / steps) + &".".repeat(30 - 30 * s / steps);
                    let line = format!("[{bar}] {s}/{steps} loss {loss:.3} lr {lr:.2e} |g| {norm:.2} {tps:.0} tok/s ETA {}", fmt_secs(eta));
                    if tty {
                        eprint!("\r{line}");
                    } else if s % 10 == 0 {
                        eprintln!("{line}");
                    }
                    if let Some(&(vs, v)) = t.log.valid.last().filter(|v| v.0 == s) {
                        eprintln!("{}step {vs}: validation loss {v:.4} (perplexity {:.1})", if tty { "\n" } else { "" }, v.exp());
                    }
                })
                .map_err(|e| e.to_string())?;
            // the engine's files: config.json, model.safetensors (f16); on a stop too, so that
            // the heads of a run can be measured part-way (`attnlab heads --model DIR`)
            let model = trainer.to_model()?;
            let dir = &cli.model_dir;
            std::fs::write(dir.join("config.json"), config.to_json()).map_err(|e| e.to_string())?;
            std::fs::write(dir.join("model.safetensors"), model.to_safetensors(true))
                .map_err(|e| e.to_string())?;
            if trainer.step() < steps {
                eprintln!(
                    "\nstopped at step {}; its weights are in {}; run again to resume",
                    trainer.step(),
                    dir.display()
                );
                return Ok(());
            }
            let unigram = analysis::unigram_loss(&train, &valid, config.vocab_size);
            let log = &trainer.log;
            let mut csv = String::from("step,train_loss,valid_loss\n");
            for (t, v) in log.train.iter().zip(&log.valid) {
                csv.push_str(&format!("{},{},{}\n", t.0, t.1, v.1));
            }
            std::fs::write(dir.join("training-log.csv"), csv).map_err(|e| e.to_string())?;
            plot::loss_curve(&log.train, &log.valid, unigram as f32)
                .save(dir.join("loss-curve.png"))
                .map_err(|e| e.to_string())?;
            let summary = serde_json::json!({
                "hyper": hyper, "train_tokens": train.len(), "valid_tokens": valid.len(),
                "params": config.n_params(false), "tokens_seen": log.tokens_seen,
                "train_seconds": log.seconds, "tokens_per_second": log.tokens_seen as f64 / log.seconds,
                "final_train_loss": log.train.last().map(|x| x.1), "final_valid_loss": log.valid.last().map(|x| x.1),
                "unigram_valid_loss": unigram,
                "threads": std::env::var("RAYON_NUM_THREADS").ok(),
                "schedules": log.schedules,
                "corpora": log.corpora,
            });
            std::fs::write(
                dir.join("training.json"),
                serde_json::to_string_pretty(&summary).unwrap(),
            )
            .map_err(|e| e.to_string())?;
            let _ = std::io::stderr().flush();
            println!("\ndone: {}", summary);
            Ok(())
        }
        Cmd::Card { baseline } => {
            let dir = &cli.model_dir;
            let b = Bundle::load_dir(dir).map_err(|e| e.to_string())?;
            let valid = read(&cli.corpus.join("valid.txt"))?;
            let (report, roles) = analysis::head_roles(&b, &valid)?;
            let top_keys = analysis::lesson_top_keys(&b)?;
            let table = format!(
                "Head roles over {} held-out lines (`attnlab heads --corpus data/corpus/valid.txt`):\n\n{roles}\nIn the lesson sentence:\n\n{top_keys}",
                report.texts
            );
            std::fs::write(dir.join("head-analysis.md"), &table).map_err(|e| e.to_string())?;
            let manifest = read(&cli.corpus.join("manifest.json"))?;
            std::fs::write(dir.join("corpus-manifest.json"), &manifest)
                .map_err(|e| e.to_string())?;
            let json = |name: &str| -> Result<serde_json::Value, String> {
                serde_json::from_str(&read(&dir.join(name))?).map_err(|e| format!("{name}: {e}"))
            };
            let (training, tok_stats) = (json("training.json")?, json("tokenizer-stats.json")?);
            let manifest: serde_json::Value =
                serde_json::from_str(&manifest).map_err(|e| e.to_string())?;
            let mut preds = String::new();
            for prompt in ["나는 어제 산 커피를", "Which do you like better, coffee or"] {
                let (toks, tr) = b
                    .trace(prompt, &Default::default())
                    .map_err(|e| e.to_string())?;
                let shown: Vec<String> = tr
                    .top_k(tr.dims.t - 1, 5)
                    .into_iter()
                    .map(|(id, p)| format!("`{}` {:.1} %", b.tokenizer.display_id(id), p * 100.0))
                    .collect();
                let pieces: Vec<&str> = toks.iter().map(|t| t.display.as_str()).collect();
                preds.push_str(&format!(
                    "- `{prompt}` (tokens: {}) → {}\n",
                    pieces.join(" · "),
                    shown.join(", ")
                ));
            }
            let fixed = read(Path::new(FIXED_SET))?;
            let mut comparison = String::from("| model | fixed set, nats/token (48 windows) | fixed set, nats/token (all windows) | fixed set, nats/char | new held-out set, nats/token (48 windows) |\n|---|---:|---:|---:|---:|\n");
            let mut measure = |name: &str, m: &Bundle| -> Result<(), String> {
                let (f48, fall) = (
                    analysis::text_loss(m, &fixed, 48)?,
                    analysis::text_loss(m, &fixed, usize::MAX)?,
                );
                let v48 = analysis::text_loss(m, &valid, 48)?;
                comparison.push_str(&format!(
                    "| {name} | {:.3} | {:.3} ({} windows) | {:.3} | {:.3} |\n",
                    f48.nats_per_token,
                    fall.nats_per_token,
                    fall.windows,
                    fall.nats_per_char,
                    v48.nats_per_token
                ));
                Ok(())
            };
            measure("this model", &b)?;
            let baseline: Vec<(String, PathBuf)> = baseline
                .iter()
                .map(|s| match s.split_once('=') {
                    // (a folder whose own name holds '=' is a folder, not NAME=DIR)
                    Some((name, dir)) if !Path::new(s).is_dir() => {
                        (name.to_string(), PathBuf::from(dir))
                    }
                    _ => (format!("`{s}`"), PathBuf::from(s)),
                })
                .collect();
            for (name, base) in &baseline {
                let old = Bundle::load_dir(base).map_err(|e| format!("{}: {e}", base.display()))?;
                measure(name, &old)?;
            }
            let log = read(&dir.join("training-log.csv"))?;
            let best_valid = log
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let f: Vec<&str> = l.split(',').collect();
                    Some((
                        f.first()?.parse::<usize>().ok()?,
                        f.get(2)?.parse::<f64>().ok()?,
                    ))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .unwrap_or((0, f64::NAN));
            let lesson_tokens = b
                .tokenizer
                .encode(analysis::LESSON)
                .map_err(|e| e.to_string())?
                .len();
            // the first earlier model's curve beside this one's, for the card's history
            let previous_curve = match baseline.first() {
                // (never a folder onto itself: copying a file onto itself empties it)
                Some((name, base))
                    if base.join("loss-curve.png").is_file()
                        && base.canonicalize().ok() != dir.canonicalize().ok() =>
                {
                    std::fs::copy(
                        base.join("loss-curve.png"),
                        dir.join("loss-curve-previous.png"),
                    )
                    .map_err(|e| format!("loss-curve-previous.png: {e}"))?;
                    Some(name.as_str())
                }
                _ => None,
            };
            let card = card::render(
                &b.model.config,
                &training,
                &tok_stats,
                &manifest,
                &card::Measured {
                    heads: &table,
                    predictions: &preds,
                    comparison: &comparison,
                    lesson_tokens,
                    best_valid,
                    previous_curve,
                },
            );
            std::fs::write(dir.join("README.md"), card).map_err(|e| e.to_string())?;
            println!(
                "{table}\n{preds}\nwrote {}",
                dir.join("README.md").display()
            );
            Ok(())
        }
    }
}

fn eval(dir: &Path, file: &Path, windows: usize) -> Result<(), String> {
    let b = Bundle::load_dir(dir).map_err(|e| e.to_string())?;
    let loss = analysis::text_loss(&b, &read(file)?, windows)?;
    println!(
        "{}",
        serde_json::to_string(&loss).map_err(|e| e.to_string())?
    );
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
