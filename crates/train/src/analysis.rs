//! Honest measurements of a trained model: its heads' roles (the same code as `attnlab
//! heads`), the lesson sentence's top keys, and the unigram baseline.

use attnlab_model::roles::{self, Probe};
use attnlab_model::{AttentionOptions, Bundle};

pub const LESSON: &str = "나는 어제 산 커피를 오늘 마셨다";

/// Every head's roles over the held-out lines and the probe: the same code and defaults as
/// `attnlab heads --corpus FILE` (attnlab_model::roles), as a markdown table.
pub fn head_roles(b: &Bundle, corpus: &str) -> Result<(roles::Report, String), String> {
    let probe = Probe::new(
        &b.tokenizer,
        roles::PROBE_LEN,
        roles::PROBE_SEED,
        b.model.config.n_positions,
    );
    let report = roles::measure(
        b,
        &roles::corpus_lines(corpus),
        &probe,
        &AttentionOptions::default(),
        |_, _| {},
    )
    .map_err(|e| e.to_string())?;
    let table = roles::markdown_table(&report.scores, report.n_head);
    Ok((report, table))
}

/// For every head, the key that "마셨다" (the lesson sentence's last token) attends to most,
/// with its weight, as a markdown table.
pub fn lesson_top_keys(b: &Bundle) -> Result<String, String> {
    let (toks, tr) = b
        .trace(LESSON, &AttentionOptions::default())
        .map_err(|e| e.to_string())?;
    let (t, q) = (tr.dims.t, toks.len() - 1);
    let mut s =
        String::from("| layer | head | top key for “마셨다” | weight |\n|---|---|---|---:|\n");
    for l in 0..tr.dims.n_layer {
        for h in 0..tr.dims.n_head {
            let row = &tr.head(l, h).weights[q * t..(q + 1) * t];
            let (j, &w) = row
                .iter()
                .enumerate()
                .max_by(|x, y| x.1.total_cmp(y.1))
                .expect("non-empty");
            s.push_str(&format!("| {l} | {h} | {} | {w:.3} |\n", toks[j].display));
        }
    }
    Ok(s)
}

/// A model's loss on a text set, measured with attnlab's own forward pass.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TextLoss {
    /// Mean next-token cross-entropy (nats/token) over the first `windows` windows (the
    /// trainer's validation measure when `windows` is its `eval_windows`).
    pub nats_per_token: f64,
    /// The same loss spread over characters: nats/token × tokens/character of the whole set,
    /// comparable between models with different tokenizers.
    pub nats_per_char: f64,
    pub windows: usize,
    pub tokens: usize,
    pub chars: usize,
}

/// The loss of `b` on `text` (one paragraph per line, as the trainer reads it): non-overlapping
/// windows of context + 1 tokens from the start, at most `max_windows` of them.
pub fn text_loss(b: &Bundle, text: &str, max_windows: usize) -> Result<TextLoss, String> {
    let stream = crate::data::encode_lines(&b.tokenizer, text)?;
    let seq = b.model.config.n_positions;
    let windows = crate::data::fixed_windows(&stream, seq, max_windows);
    if windows.is_empty() {
        return Err(format!("the text has fewer than {} tokens", seq + 1));
    }
    let v = b.model.config.vocab_size;
    let (mut sum, mut n) = (0f64, 0usize);
    for w in &windows {
        let tr = attnlab_model::forward(&b.model, &w[..seq], &AttentionOptions::default())
            .map_err(|e| e.to_string())?;
        for i in 0..seq {
            let p = tr.probs[i * v + w[i + 1] as usize].max(f32::MIN_POSITIVE);
            sum -= (p as f64).ln();
            n += 1;
        }
    }
    let chars: usize = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.chars().count() + 1)
        .sum();
    let per_token = sum / n as f64;
    Ok(TextLoss {
        nats_per_token: per_token,
        nats_per_char: per_token * stream.len() as f64 / chars.max(1) as f64,
        windows: windows.len(),
        tokens: stream.len(),
        chars,
    })
}

/// Cross-entropy (nats/token) of `valid` under the add-one-smoothed unigram distribution
/// of `train`.
pub fn unigram_loss(train: &[u32], valid: &[u32], vocab: usize) -> f64 {
    let mut counts = vec![1f64; vocab];
    for &id in train {
        counts[id as usize] += 1.0;
    }
    let total: f64 = counts.iter().sum();
    -valid
        .iter()
        .map(|&id| (counts[id as usize] / total).ln())
        .sum::<f64>()
        / valid.len().max(1) as f64
}
