//! `attnlab`: run the model from the command line and look at its attention.

mod formation;
mod heads;
mod heatmap;
mod llama;
mod output;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use attnlab_model::inspect::Inspect;
use attnlab_model::open::{open, Opened};
use attnlab_model::{export, AttentionOptions, Keep};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "attnlab",
    version,
    about = "Look inside a small Transformer's self-attention"
)]
struct Cli {
    /// Folder with config.json, model.safetensors (or shards) and tokenizer.json — GPT-2
    /// layout, or Llama, Mistral, Qwen2 — or a llama or qwen2 .gguf file
    /// [default: $ATTNLAB_MODEL, else the bundled model in assets/model]
    #[arg(long, global = true, value_name = "DIR|FILE.gguf")]
    model: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the attention trace: scores, scaled, masked scores and weights per head. The run
    /// keeps no maps: each head's are computed from its queries and keys as it is printed, so
    /// one head (--layer L --head H) can be read at any length the model allows.
    Trace {
        /// Input text ("-" reads standard input)
        text: String,
        /// Only this layer (from 0)
        #[arg(long)]
        layer: Option<usize>,
        /// Only this head (from 0)
        #[arg(long)]
        head: Option<usize>,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// With --format json: the whole Trace (every intermediate of the forward pass, every
        /// head's maps); refused, with the size it would need, past 4 GB
        #[arg(long)]
        full: bool,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// Draw one head's attention weights as a PNG heatmap with token labels.
    Heatmap {
        text: String,
        #[arg(long)]
        layer: usize,
        #[arg(long)]
        head: usize,
        /// Output PNG file
        #[arg(short, long)]
        output: PathBuf,
        /// A font with Hangul glyphs for the labels [default: $ATTNLAB_FONT, else a system CJK font]
        #[arg(long)]
        font: Option<PathBuf>,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// Print the most likely next tokens after the text.
    Predict {
        text: String,
        /// How many candidates
        #[arg(long, default_value_t = 10)]
        top: usize,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// The logit lens: the residual stream after the embedding and each block, through the
    /// output head, as next-token probabilities at one position.
    Lens {
        text: String,
        /// The position (from 0; default: the last token)
        #[arg(long)]
        pos: Option<usize>,
        /// How many tokens per stage
        #[arg(long, default_value_t = 5)]
        top: usize,
        #[arg(long, value_enum, default_value_t = HeadsFormat::Table)]
        format: HeadsFormat,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// Where a query token's information comes from, per layer: attention rollout (an
    /// approximation), value-weighted attention or raw attention.
    Flow {
        text: String,
        /// The query token (from 0; default: the last)
        #[arg(long)]
        query: Option<usize>,
        #[arg(long, value_enum, default_value_t = FlowMethod::Rollout)]
        method: FlowMethod,
        #[arg(long, value_enum, default_value_t = FlowFormat::Json)]
        format: FlowFormat,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// Every head's weights pooled to at most SIDE × SIDE cells (the page's heads grid of a
    /// long text), as JSON: the span a cell covers, the cells on a side, each head's cells
    /// row by row. Computed a band of rows at a time: any length the model allows.
    Thumbnails {
        text: String,
        /// Cells on a side, at most
        #[arg(long, default_value_t = 64)]
        side: usize,
        /// Only this layer (from 0)
        #[arg(long)]
        layer: Option<usize>,
        /// Only this head (from 0)
        #[arg(long)]
        head: Option<usize>,
        #[command(flatten)]
        attn: AttnArgs,
    },
    /// Append tokens to the text one by one: greedy, or sampled with an output temperature
    /// and top-k / top-p from a seed (the attention is left as it is).
    Generate {
        text: String,
        /// How many tokens (stops early, and says so, when the context is full)
        #[arg(long, default_value_t = 16)]
        steps: usize,
        /// Output temperature (on the final logits; not the attention's τ)
        #[arg(long, default_value_t = 1.0)]
        temperature: f32,
        #[arg(long)]
        top_k: Option<usize>,
        #[arg(long)]
        top_p: Option<f32>,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Always the most likely token
        #[arg(long)]
        greedy: bool,
        #[arg(long, value_enum, default_value_t = HeadsFormat::Table)]
        format: HeadsFormat,
    },
    /// Score every head's role (previous-token, first-token, self, broad, local from the
    /// text; induction and duplicate-token from a repeated random-token probe).
    Heads {
        /// A text to read the text roles from ("-" reads standard input)
        #[arg(conflicts_with = "corpus")]
        text: Option<String>,
        /// A file of texts, one per line: the text roles are averaged over its lines
        #[arg(long, value_name = "FILE")]
        corpus: Option<PathBuf>,
        /// Tokens per copy of the probe (two copies must fit the context)
        #[arg(long, default_value_t = attnlab_model::roles::PROBE_LEN)]
        probe_len: usize,
        /// Seed of the probe's random tokens
        #[arg(long, default_value_t = attnlab_model::roles::PROBE_SEED)]
        seed: u64,
        #[arg(long, value_enum, default_value_t = HeadsFormat::Table)]
        format: HeadsFormat,
        #[command(flatten)]
        attn: AttnArgs,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FlowMethod {
    Rollout,
    Value,
    Raw,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FlowFormat {
    Json,
    Csv,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum HeadsFormat {
    Json,
    Table,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Json,
    Csv,
    Table,
}

/// Attention options, applied inside the whole forward pass.
#[derive(Args)]
struct AttnArgs {
    /// Softmax temperature τ (> 0)
    #[arg(long, default_value_t = 1.0)]
    temperature: f32,
    /// Do not divide QKᵀ by √d_k
    #[arg(long)]
    no_scale: bool,
    /// Switch the causal mask off (tokens may look ahead)
    #[arg(long)]
    no_mask: bool,
    /// Heads to switch off, as LAYER.HEAD separated by commas (e.g. 0.1,2.3)
    #[arg(long, value_delimiter = ',', value_parser = parse_head)]
    ablate: Vec<(usize, usize)>,
}

fn parse_head(s: &str) -> Result<(usize, usize), String> {
    let (l, h) = s
        .split_once('.')
        .ok_or_else(|| format!("`{s}` is not LAYER.HEAD"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{s}` is not LAYER.HEAD"))
    };
    Ok((num(l)?, num(h)?))
}

impl AttnArgs {
    fn options(&self) -> AttentionOptions {
        AttentionOptions {
            scale: !self.no_scale,
            temperature: self.temperature,
            causal_mask: !self.no_mask,
            ablate: self.ablate.iter().copied().collect::<BTreeSet<_>>(),
        }
    }
}

/// The bundled model's folder in this source tree.
const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/model");

fn model_dir(arg: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(dir) = arg.or_else(|| std::env::var_os("ATTNLAB_MODEL").map(PathBuf::from)) {
        return Ok(dir);
    }
    let bundled = PathBuf::from(BUNDLED);
    if bundled.join("model.safetensors").is_file() {
        Ok(bundled)
    } else {
        Err(format!(
            "no bundled model is present (looked in {}); pass --model DIR with config.json, \
             model.safetensors and tokenizer.json, or set ATTNLAB_MODEL",
            bundled.display()
        ))
    }
}

fn read_text(text: String) -> Result<String, String> {
    if text != "-" {
        return Ok(text);
    }
    let mut s = String::new();
    std::io::stdin()
        .read_to_string(&mut s)
        .map_err(|e| format!("reading standard input: {e}"))?;
    Ok(s)
}

fn run(cli: Cli) -> Result<(), String> {
    let dir = model_dir(cli.model)?;
    let mut out = std::io::stdout().lock();
    let opened =
        open(&dir).map_err(|e| format!("loading the model from {}: {e}", dir.display()))?;
    match opened {
        Opened::Llama(bundle) => match cli.command {
            // the lean forward: no trace is kept, so long texts fit
            Command::Predict {
                text,
                top,
                format,
                attn,
            } => llama::predict(
                &mut out,
                &bundle,
                &read_text(text)?,
                top,
                &attn.options(),
                format == Format::Json,
            ),
            command => inspect(&mut out, &bundle, command),
        },
        Opened::Gpt2(bundle) => inspect(&mut out, &bundle, cli.command),
    }
}

/// The commands every model answers, through `Inspect`: traced runs, the lens, the flow, the
/// head roles and generation.
fn inspect(
    out: &mut impl std::io::Write,
    model: &impl Inspect,
    command: Command,
) -> Result<(), String> {
    // every command but `trace --full` keeps no maps: a head's are computed from its queries
    // and keys when they are read, so a long text costs O(layers · T · d_model)
    let trace = |text: String, attn: &AttnArgs, keep: Keep| {
        let text = read_text(text)?;
        model
            .trace_text(&text, &attn.options(), keep)
            .map_err(|e| e.to_string())
    };
    match command {
        Command::Trace {
            text,
            layer,
            head,
            format,
            full,
            attn,
        } => {
            let keep = if full && format == Format::Json {
                Keep::All
            } else {
                Keep::Streams
            };
            let (tokens, tr) = trace(text, &attn, keep)?;
            let sel = export::Selection::new(&tr, layer, head)?;
            match format {
                Format::Json if full => export::write_full_json(out, &tokens, &tr),
                Format::Json => export::write_json(
                    out,
                    &|id| model.tokenizer().display_id(id),
                    &tokens,
                    &tr,
                    &sel,
                ),
                Format::Csv => export::write_csv(out, &tokens, &tr, &sel),
                Format::Table => output::write_table(out, model, &tokens, &tr, &sel),
            }
            .or_else(quiet_broken_pipe)
        }
        Command::Heatmap {
            text,
            layer,
            head,
            output,
            font,
            attn,
        } => {
            let (tokens, tr) = trace(text, &attn, Keep::Streams)?;
            export::Selection::new(&tr, Some(layer), Some(head))?;
            let hv = export::head_maps(&tr, layer, head).map_err(|e| e.to_string())?;
            let font = heatmap::load_font(font)?;
            if font.is_none() {
                eprintln!("warning: no font with Hangul found (install fonts-noto-cjk or pass --font); labels are token numbers");
            }
            let img = heatmap::render(&tokens, &tr, &hv, font.as_ref());
            img.save(&output)
                .map_err(|e| format!("writing {}: {e}", output.display()))?;
            eprintln!(
                "wrote {} ({}×{})",
                output.display(),
                img.width(),
                img.height()
            );
            Ok(())
        }
        Command::Predict {
            text,
            top,
            format,
            attn,
        } => {
            let (tokens, tr) = trace(text, &attn, Keep::Streams)?;
            output::write_predictions(out, model, &tokens, &tr, top, format == Format::Json)
                .or_else(quiet_broken_pipe)
        }
        Command::Lens {
            text,
            pos,
            top,
            format,
            attn,
        } => {
            let (tokens, tr) = trace(text, &attn, Keep::Streams)?;
            formation::lens(
                out,
                model,
                &tokens,
                &tr,
                pos,
                top,
                format == HeadsFormat::Json,
            )
        }
        Command::Thumbnails {
            text,
            side,
            layer,
            head,
            attn,
        } => {
            let (_, tr) = trace(text, &attn, Keep::Streams)?;
            heads::thumbnails(out, &tr, side, layer, head)
        }
        Command::Flow {
            text,
            query,
            method,
            format,
            attn,
        } => {
            let (tokens, tr) = trace(text, &attn, Keep::Streams)?;
            let method = match method {
                FlowMethod::Rollout => attnlab_model::flow::Method::Rollout,
                FlowMethod::Value => attnlab_model::flow::Method::Value,
                FlowMethod::Raw => attnlab_model::flow::Method::Raw,
            };
            formation::flow(out, &tokens, &tr, query, method, format == FlowFormat::Json)
        }
        Command::Heads {
            text,
            corpus,
            probe_len,
            seed,
            format,
            attn,
        } => {
            let texts = heads::texts(text, corpus)?;
            let opts = attn.options();
            let (n_layer, n_head) = model.heads();
            opts.validate_for(n_layer, n_head)
                .map_err(|e| e.to_string())?;
            heads::run(
                out,
                model,
                &texts,
                probe_len,
                seed,
                &opts,
                format == HeadsFormat::Json,
            )
        }
        Command::Generate {
            text,
            steps,
            temperature,
            top_k,
            top_p,
            seed,
            greedy,
            format,
        } => {
            let text = read_text(text)?;
            let sampling = attnlab_model::sample::Sampling {
                greedy,
                temperature,
                top_k,
                top_p,
                seed,
            };
            formation::generate_cmd(
                out,
                model,
                &text,
                steps,
                &sampling,
                format == HeadsFormat::Json,
            )
        }
    }
}

/// A reader that closed the pipe early (`attnlab … | head`) is not an error.
fn quiet_broken_pipe(e: std::io::Error) -> Result<(), String> {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
