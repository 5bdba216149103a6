//! Lesson mode's content and arithmetic: nine sections that follow the self-attention
//! lesson, each bound to a panel of the page, and the small computations its widgets show
//! (softmax of the lesson's scores, the ÷√d_k example, the q·k variance demo). The prose is
//! in [`crate::lesson_text`]; everything here is pure and unit-tested.

use attnlab_model::cpu::softmax_rows;
use attnlab_model::roles::{Role, Scores};
use attnlab_model::Trace;
use std::ops::Range;

/// How many sections lesson mode has.
pub const LESSON_SECTIONS: usize = Section::ALL.len();

/// The sections, in the lesson's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    WhyNotRnn,
    Qkv,
    Scores,
    Scaling,
    Softmax,
    WeightedSum,
    CausalMask,
    MultiHead,
    Block,
}

impl Section {
    pub const ALL: [Section; 9] = [
        Section::WhyNotRnn,
        Section::Qkv,
        Section::Scores,
        Section::Scaling,
        Section::Softmax,
        Section::WeightedSum,
        Section::CausalMask,
        Section::MultiHead,
        Section::Block,
    ];

    /// The section at 0-based `i` (clamped).
    pub fn at(i: usize) -> Section {
        Section::ALL[i.min(Section::ALL.len() - 1)]
    }

    pub fn index(self) -> usize {
        Section::ALL.iter().position(|&s| s == self).unwrap_or(0)
    }

    /// The page's panel this section is about (its CSS class), highlighted while it is open.
    pub fn panel(self) -> &'static str {
        match self {
            Section::WhyNotRnn => "heads-card",
            Section::Qkv => "head-card",
            Section::Scores | Section::Softmax => "steps-card",
            Section::Scaling => "compare-card",
            Section::WeightedSum => "sum-card",
            Section::CausalMask => "next-card",
            Section::MultiHead => "heads-card",
            Section::Block => "model-card",
        }
    }

    /// The example sentence the section is written around (a one-click preset).
    pub fn preset(self) -> Option<&'static str> {
        match self {
            Section::WhyNotRnn => Some(PRESETS[1]),
            Section::WeightedSum | Section::Scores | Section::Qkv => Some(PRESETS[0]),
            Section::MultiHead => Some(PRESETS[2]),
            _ => None,
        }
    }
}

/// The lesson's example sentences.
pub const PRESETS: [&str; 3] = [
    "나는 어제 산 커피를 오늘 마셨다",
    "나는 커피를 마셨다",
    "Which do you like better, coffee or tea?",
];

/// The lesson's raw scores for the ÷√d_k example, and its d_k.
pub const SCALING_SCORES: [f64; 4] = [2.0, 4.0, 20.0, 3.0];
pub const SCALING_DK: usize = 64;
/// The lesson's relevance scores for the softmax example.
pub const SOFTMAX_SCORES: [f64; 4] = [1.2, 0.3, 2.1, -0.4];

/// Softmax of one row, by the model's own softmax (the CPU reference's `softmax_rows`, in f32,
/// max-shifted), so the lesson shows the numbers the model would compute. Empty in → empty out.
pub fn softmax(xs: &[f64]) -> Vec<f64> {
    let x: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
    let mut out = vec![0.0f32; x.len()];
    softmax_rows(&x, x.len().max(1), 1.0, &mut out);
    out.into_iter().map(f64::from).collect()
}

/// Parses "2, 4, 20, 3" (commas, spaces or semicolons; "−" accepted) into 1…16 finite numbers
/// of magnitude ≤ 1e6. The error names the first bad entry.
pub fn parse_scores(s: &str) -> Result<Vec<f64>, String> {
    let xs: Vec<&str> = s
        .split([',', ';', ' ', '\t', '\n'])
        .filter(|p| !p.is_empty())
        .collect();
    if xs.is_empty() || xs.len() > 16 {
        return Err(format!("1–16 numbers, got {}", xs.len()));
    }
    xs.iter()
        .map(|p| {
            let t = p.replace('−', "-");
            match t.parse::<f64>() {
                Ok(x) if x.is_finite() && x.abs() <= 1e6 => Ok(x),
                _ => Err(p.chars().take(20).collect::<String>()),
            }
        })
        .collect()
}

/// A small deterministic generator (xorshift64*), so the variance demo is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform on ±√3: mean 0, variance 1.
    fn unit(&mut self) -> f64 {
        (self.next() * 2.0 - 1.0) * 3f64.sqrt()
    }
}

/// The variance demo for one d_k: `samples` pairs of random q, k with unit-variance
/// components; returns (variance of q·k, variance of q·k ÷ √d_k). Theory: d_k and 1.
pub fn dot_variance(d_k: usize, samples: usize, seed: u64) -> (f64, f64) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let dots: Vec<f64> = (0..samples)
        .map(|_| (0..d_k).map(|_| rng.unit() * rng.unit()).sum())
        .collect();
    let n = dots.len().max(1) as f64;
    let mean = dots.iter().sum::<f64>() / n;
    let var = dots.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / n;
    (var, var / d_k as f64)
}

/// The d_k values the variance demo compares.
pub const VARIANCE_DKS: [usize; 5] = [1, 4, 16, 64, 256];

/// The head a text shows most clearly: among heads that are not attention sinks (their
/// first-token score under its threshold), the one whose rows are least spread out (the
/// lowest `broad` score: mean row entropy ÷ its maximum). Ties go to the earlier head; None
/// when the text is too short to say or every head is a sink.
pub fn clearest_head(roles: &[Scores], n_head: usize) -> Option<(usize, usize)> {
    roles
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.has(Role::First))
        .filter_map(|(i, s)| Some((i, s.get(Role::Broad)?)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(i, _)| (i / n_head.max(1), i % n_head.max(1)))
}

/// One head's strongest key from a query: (layer, head, key, weight).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopKey {
    pub layer: usize,
    pub head: usize,
    pub key: usize,
    pub weight: f32,
}

/// Every head's largest weight from query `q`, largest first (ties: earlier head first).
/// Section 6 shows the first (the head where the query's largest weight is highest);
/// section 8 lists them all.
pub fn top_keys(trace: &Trace, q: usize) -> Vec<TopKey> {
    let d = trace.dims;
    let mut out = Vec::with_capacity(d.n_layer * d.n_head);
    for layer in 0..d.n_layer {
        for head in 0..d.n_head {
            // (a slim trace of a long text holds a few heads: the others are not there)
            let Some(hv) = trace.try_head(layer, head) else {
                continue;
            };
            let row = &hv.weights[q * d.t..(q + 1) * d.t];
            let (key, &weight) = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
                .expect("a row has a key");
            out.push(TopKey {
                layer,
                head,
                key,
                weight,
            });
        }
    }
    out.sort_by(|a, b| {
        b.weight
            .total_cmp(&a.weight)
            .then((a.layer, a.head).cmp(&(b.layer, b.head)))
    });
    out
}

/// The words of the first `n` tokens, as token ranges: a word starts at the first token, at
/// every token whose label begins with the tokenizer's space mark `␣` (so 커피를, split by the
/// tokenizer into `␣커피` + `를`, is one word of two tokens) and after a line break (`⏎`).
pub fn word_spans<S: AsRef<str>>(labels: &[S], n: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut after_break = false;
    for (j, label) in labels.iter().enumerate().take(n) {
        let label = label.as_ref();
        match out.last_mut() {
            Some(w) if !label.starts_with('␣') && !after_break => w.end = j + 1,
            _ => out.push(j..j + 1),
        }
        after_break = label.ends_with('⏎');
    }
    out
}

/// The text of a word: its tokens' labels joined, without the space mark.
pub fn word_text<S: AsRef<str>>(labels: &[S], word: &Range<usize>) -> String {
    labels[word.clone()]
        .iter()
        .map(|l| l.as_ref())
        .collect::<String>()
        .trim_start_matches('␣')
        .to_string()
}

/// One head's attention from a query to a word: the weights on the word's tokens, and their sum.
#[derive(Clone, Debug, PartialEq)]
pub struct WordWeight {
    pub layer: usize,
    pub head: usize,
    /// The weight on each of the word's tokens, in order.
    pub parts: Vec<f32>,
    /// Their sum: the attention the word gets as a whole.
    pub weight: f32,
}

/// The lesson's pattern counted word by word (see [`word_pattern`]).
pub struct WordPattern {
    /// The heads whose largest word is the target, strongest first.
    pub top: Vec<WordWeight>,
    /// The head that gives the target the largest weight, whichever word it looks at most.
    pub best: WordWeight,
}

/// From query `q`, each head's weights summed over the tokens of each word (`words`, from
/// [`word_spans`]), and which heads look most at word `target`. Ties go to the earlier word and
/// the earlier head. None when `target` is not a word that ends before the query.
pub fn word_pattern(
    trace: &Trace,
    q: usize,
    words: &[Range<usize>],
    target: usize,
) -> Option<WordPattern> {
    let d = trace.dims;
    let span = words.get(target)?.clone();
    if span.end > q + 1 || q >= d.t {
        return None;
    }
    let mut top = Vec::new();
    let mut best: Option<WordWeight> = None;
    for layer in 0..d.n_layer {
        for head in 0..d.n_head {
            // (a slim trace of a long text holds a few heads: the others are not there)
            let Some(hv) = trace.try_head(layer, head) else {
                continue;
            };
            let row = &hv.weights[q * d.t..(q + 1) * d.t];
            let sum = |r: &Range<usize>| {
                row[r.start.min(q + 1)..r.end.min(q + 1)]
                    .iter()
                    .sum::<f32>()
            };
            let parts = row[span.clone()].to_vec();
            let here = WordWeight {
                layer,
                head,
                weight: parts.iter().sum(),
                parts,
            };
            let largest = words
                .iter()
                .enumerate()
                .map(|(i, w)| (i, sum(w)))
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
                .map(|(i, _)| i);
            if largest == Some(target) {
                top.push(here.clone());
            }
            if best.as_ref().is_none_or(|b| here.weight > b.weight) {
                best = Some(here);
            }
        }
    }
    top.sort_by(|a, b| b.weight.total_cmp(&a.weight));
    Some(WordPattern { top, best: best? })
}

#[cfg(test)]
mod tests;
