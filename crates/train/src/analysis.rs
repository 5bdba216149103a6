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
