//! Honest measurements of a trained model: per-head attention statistics and the unigram
//! baseline.

use attnlab_model::{forward, AttentionOptions, Bundle};

/// Per-head statistics over a set of texts.
#[derive(Debug, Clone)]
pub struct HeadStats {
    pub layer: usize,
    pub head: usize,
    /// Mean entropy (nats) of the attention rows.
    pub entropy: f64,
    /// Mean weight on the previous token (rows i ≥ 1).
    pub prev: f64,
    /// Mean weight on the first token (rows i ≥ 1).
    pub first: f64,
    /// The key "마셨다" attends to most in the lesson sentence, with its weight.
    pub top_for_masyeotda: (String, f32),
}

pub const LESSON: &str = "나는 어제 산 커피를 오늘 마셨다";

pub fn head_stats(b: &Bundle, texts: &[&str]) -> Result<Vec<HeadStats>, String> {
    let c = &b.model.config;
    let (nl, nh) = (c.n_layer, c.n_head);
    let mut acc = vec![(0f64, 0f64, 0f64, 0usize, 0usize); nl * nh];
    for text in texts {
        let ids = b.tokenizer.ids(text).map_err(|e| e.to_string())?;
        if ids.len() < 2 {
            continue;
        }
        let tr =
            forward(&b.model, &ids, &AttentionOptions::default()).map_err(|e| e.to_string())?;
        let t = tr.dims.t;
        for l in 0..nl {
            for h in 0..nh {
                let w = tr.head(l, h).weights;
                let a = &mut acc[l * nh + h];
                for i in 0..t {
                    let row = &w[i * t..(i + 1) * t];
                    a.0 += attnlab_model::cpu::entropy(row) as f64;
                    a.3 += 1;
                    if i >= 1 {
                        a.1 += row[i - 1] as f64;
                        a.2 += row[0] as f64;
                        a.4 += 1;
                    }
                }
            }
        }
    }
    let toks = b.tokenizer.encode(LESSON).map_err(|e| e.to_string())?;
    let tr = forward(
        &b.model,
        &toks.iter().map(|t| t.id).collect::<Vec<_>>(),
        &AttentionOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    // the query is the last token of 마셨다 (the word ends the sentence)
    let q = toks.len() - 1;
    let t = tr.dims.t;
    let mut out = Vec::new();
    for l in 0..nl {
        for h in 0..nh {
            let a = acc[l * nh + h];
            let row = &tr.head(l, h).weights[q * t..(q + 1) * t];
            let (j, &w) = row
                .iter()
                .enumerate()
                .max_by(|x, y| x.1.total_cmp(y.1))
                .expect("non-empty");
            out.push(HeadStats {
                layer: l,
                head: h,
                entropy: a.0 / a.3.max(1) as f64,
                prev: a.1 / a.4.max(1) as f64,
                first: a.2 / a.4.max(1) as f64,
                top_for_masyeotda: (toks[j].display.clone(), w),
            });
        }
    }
    Ok(out)
}

/// A markdown table of the head statistics.
pub fn head_table(stats: &[HeadStats]) -> String {
    let mut s = String::from("| layer | head | mean entropy (nats) | on previous token | on first token | top key for “마셨다” (weight) |\n|---|---|---|---|---|---|\n");
    for h in stats {
        s.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {} ({:.3}) |\n",
            h.layer,
            h.head,
            h.entropy,
            h.prev,
            h.first,
            h.top_for_masyeotda.0,
            h.top_for_masyeotda.1
        ));
    }
    s
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
