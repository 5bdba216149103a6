//! Head roles: what each attention head does, as scores in [0, 1] computed from the attention
//! weights of a run ([`AttentionMaps`]: a [`Trace`], or [`HeadMaps`] from a model that keeps only
//! the weights).
//!
//! Five roles are read from any text's attention weights `w` (row i = query i, column j =
//! key j); each is a mean over the rows where it means something:
//!
//! | role | score | rows |
//! |---|---|---|
//! | previous-token | `w[i][i−1]` | i ≥ 1 |
//! | first-token (attention sink) | `w[i][0]` | i ≥ 1 |
//! | self | `w[i][i]` | i ≥ 1 |
//! | broad | entropy of row i ÷ ln(keys row i sees) — 1 for a uniform row | i ≥ 1 |
//! | local | `Σ w[i][j]` over i−3 ≤ j ≤ i (the query and the 3 keys before it) | i ≥ 4 |
//!
//! Row 0 sees only key 0, so it says nothing about a head and is left out; `local` starts at
//! row 4, the first row with a key outside its window. A text too short for a role leaves
//! that score undefined (`None`), never a made-up number.
//!
//! Two more roles need a text built for them, the **probe** ([`Probe`]): `n` distinct tokens
//! drawn (seeded) from the vocabulary, special and byte tokens excluded, then the same `n`
//! again. For each query `n + k` of the second copy (k = 0 … n−1):
//!
//! | role | score |
//! |---|---|
//! | induction | `w[n+k][k+1]`, the token after the query's earlier occurrence (Olsson et al. 2022) |
//! | duplicate-token | `w[n+k][k]`, the earlier occurrence itself |
//!
//! A head *has* a role when its score reaches the role's [`Role::threshold`]; the head's
//! [`Scores::strongest`] role is the one that passes by the widest margin (score ÷
//! threshold), so a pure previous-token head is called previous-token, not local.

use std::borrow::Cow;

use rand::seq::IndexedRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::cpu::entropy;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;
use crate::trace::{AttentionOptions, Trace, TRACE_BUDGET};

/// One kind of head behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Previous,
    First,
    SelfToken,
    Broad,
    Local,
    Induction,
    Duplicate,
}

impl Role {
    /// Every role, in the order of tables.
    pub const ALL: [Role; 7] = [
        Role::Previous,
        Role::First,
        Role::SelfToken,
        Role::Broad,
        Role::Local,
        Role::Induction,
        Role::Duplicate,
    ];

    /// The score a head needs to be said to have this role.
    ///
    /// previous-token 0.4 is the usual notebook rule ("over 40 % on the previous token"); a
    /// sink holds at least half of the weight; a self head 0.4, like previous-token; broad
    /// 0.8 of the highest possible entropy; local 0.75 of the weight within four keys;
    /// induction and duplicate-token 0.3, where random-token probes of small models start to
    /// show a clear copy pattern (a uniform head scores 1/(n+k+1) there, under 0.03 for
    /// n = 32).
    pub const fn threshold(self) -> f32 {
        match self {
            Role::Previous => 0.4,
            Role::First => 0.5,
            Role::SelfToken => 0.4,
            Role::Broad => 0.8,
            Role::Local => 0.75,
            Role::Induction => 0.3,
            Role::Duplicate => 0.3,
        }
    }

    /// A short name for code, URLs and JSON.
    pub const fn code(self) -> &'static str {
        match self {
            Role::Previous => "previous",
            Role::First => "first",
            Role::SelfToken => "self",
            Role::Broad => "broad",
            Role::Local => "local",
            Role::Induction => "induction",
            Role::Duplicate => "duplicate",
        }
    }

    pub fn from_code(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.code() == s)
    }

    /// Whether the score comes from the repeated-token probe rather than from a text.
    pub const fn needs_probe(self) -> bool {
        matches!(self, Role::Induction | Role::Duplicate)
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// One head's scores, each in [0, 1]; `None` where the text (or the probe) could not say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scores(pub [Option<f32>; 7]);

impl Scores {
    pub fn get(&self, role: Role) -> Option<f32> {
        self.0[role.index()]
    }

    pub fn set(&mut self, role: Role, score: Option<f32>) {
        self.0[role.index()] = score;
    }

    /// Whether the head has `role` (its score reaches the threshold).
    pub fn has(&self, role: Role) -> bool {
        self.get(role).is_some_and(|s| s >= role.threshold())
    }

    /// The role passed by the widest margin (score ÷ threshold), with its score; `None` when
    /// no score reaches its threshold. Ties go to the role listed first in [`Role::ALL`].
    pub fn strongest(&self) -> Option<(Role, f32)> {
        let mut best: Option<(Role, f32)> = None;
        for role in Role::ALL {
            if let Some(s) = self.get(role).filter(|_| self.has(role)) {
                let margin = |r: Role, s: f32| s / r.threshold();
                if best.is_none_or(|(r, b)| margin(role, s) > margin(r, b)) {
                    best = Some((role, s));
                }
            }
        }
        best
    }

    /// These scores with the probe's roles taken from `probe`.
    pub fn with_probe(mut self, probe: &Scores) -> Scores {
        for role in [Role::Induction, Role::Duplicate] {
            self.set(role, probe.get(role));
        }
        self
    }
}

/// The five text roles of one head from its (T, T) attention weights. `causal`: whether the
/// causal mask was on (row i sees i + 1 keys; without the mask every row sees all T).
pub fn head_scores(weights: &[f32], t: usize, causal: bool) -> Scores {
    assert_eq!(weights.len(), t * t, "weights must be (T, T)");
    let mut sums = [0f64; 5];
    for i in 1..t {
        let terms = row_terms(&weights[i * t..(i + 1) * t], i, causal);
        for (s, x) in sums.iter_mut().zip(terms) {
            *s += x;
        }
    }
    text_scores_of(sums, t)
}

/// The text roles, in the order `row_terms` gives their terms.
pub const TEXT_ROLES: [Role; 5] = [
    Role::Previous,
    Role::First,
    Role::SelfToken,
    Role::Broad,
    Role::Local,
];

/// Row `i` (≥ 1) of a head's weights, as the five text roles' means add it up, in f64:
/// previous, first, self, broad, local (0 before row 4, where local is not counted). Summed
/// over rows 1.. in order, they are `head_scores`' sums bit for bit — also when the rows come
/// a band at a time (`Pooled`).
pub fn row_terms(row: &[f32], i: usize, causal: bool) -> [f64; 5] {
    let keys = if causal { i + 1 } else { row.len() };
    let local = if i >= 4 {
        row[i - 3..=i].iter().map(|&w| w as f64).sum::<f64>()
    } else {
        0.0
    };
    [
        row[i - 1] as f64,
        row[0] as f64,
        row[i] as f64,
        (entropy(&row[..keys]) / (keys as f32).ln()) as f64,
        local,
    ]
}

/// The text roles of a head of `t` tokens from its rows' `row_terms` summed.
pub fn text_scores_of(sums: [f64; 5], t: usize) -> Scores {
    let mean = |sum: f64, n: usize| (n > 0).then(|| (sum / n as f64).clamp(0.0, 1.0) as f32);
    let rows = t.saturating_sub(1);
    let mut s = Scores::default();
    for (k, role) in TEXT_ROLES.into_iter().enumerate() {
        let n = if role == Role::Local {
            t.saturating_sub(4)
        } else {
            rows
        };
        s.set(role, mean(sums[k], n));
    }
    s
}

/// Every head's text roles as a long text's worker read them while pooling its rows
/// (`Thumbnails::roles`), index `layer * n_head + head`.
pub fn pooled_scores(thumbnails: &crate::trace::Thumbnails) -> Vec<Scores> {
    thumbnails
        .roles
        .chunks_exact(TEXT_ROLES.len())
        .map(|r| {
            let mut s = Scores::default();
            for (role, &x) in TEXT_ROLES.into_iter().zip(r) {
                s.set(role, x);
            }
            s
        })
        .collect()
}

/// Every head's attention weights of one run: what the roles are read from, one head at a
/// time.
pub trait AttentionMaps {
    /// Layers, heads per layer, tokens run.
    fn size(&self) -> (usize, usize, usize);
    /// The (T, T) weights of head `head` of layer `layer` (row = query): borrowed where they
    /// are kept, computed where they are not (a trace without maps).
    fn weights(&self, layer: usize, head: usize) -> Cow<'_, [f32]>;
    /// Whether the causal mask was on.
    fn causal(&self) -> bool;
}

impl AttentionMaps for Trace {
    fn size(&self) -> (usize, usize, usize) {
        (self.dims.n_layer, self.dims.n_head, self.dims.t)
    }
    fn weights(&self, layer: usize, head: usize) -> Cow<'_, [f32]> {
        self.head_weights(layer, head)
    }
    fn causal(&self) -> bool {
        self.options.causal_mask
    }
}

/// The attention weights of every head of a run and nothing else, head after head:
/// `weights[((layer * n_head + head) * t + query) * t + key]`.
#[derive(Clone, Debug, PartialEq)]
pub struct HeadMaps {
    pub n_layer: usize,
    pub n_head: usize,
    pub t: usize,
    pub causal: bool,
    pub weights: Vec<f32>,
}

impl HeadMaps {
    /// Refuses the maps of `heads` heads over `t` tokens where they would take more than
    /// `TRACE_BUDGET`, saying how much they would need.
    pub fn within_budget(heads: usize, t: usize) -> Result<()> {
        let bytes = 4 * heads as u64 * (t as u64).pow(2);
        if bytes <= TRACE_BUDGET {
            return Ok(());
        }
        Err(Error::TooLarge(format!(
            "the attention maps of {t} tokens through this model would take {:.1} GB; more than {:.1} GB is refused",
            bytes as f64 / 1e9,
            TRACE_BUDGET as f64 / 1e9
        )))
    }
}

impl AttentionMaps for HeadMaps {
    fn size(&self) -> (usize, usize, usize) {
        (self.n_layer, self.n_head, self.t)
    }
    fn weights(&self, layer: usize, head: usize) -> Cow<'_, [f32]> {
        let n = self.t * self.t;
        let at = (layer * self.n_head + head) * n;
        Cow::Borrowed(&self.weights[at..at + n])
    }
    fn causal(&self) -> bool {
        self.causal
    }
}

/// A model with its tokenizer whose heads' roles can be measured: the bundled (GPT-2 layout)
/// models and the Llama family.
pub trait Subject {
    type Maps: AttentionMaps;
    fn tokenizer(&self) -> &Tokenizer;
    /// The most tokens one run reads.
    fn context(&self) -> usize;
    /// Layers and heads per layer.
    fn heads(&self) -> (usize, usize);
    /// The attention weights of a run on `ids` (at most `context()` of them).
    fn run(&self, ids: &[u32], opts: &AttentionOptions) -> Result<Self::Maps>;
}

/// The text roles of every head of a run, index `layer * n_head + head`.
pub fn text_scores(maps: &impl AttentionMaps) -> Vec<Scores> {
    let (n_layer, n_head, t) = maps.size();
    let mut out = Vec::with_capacity(n_layer * n_head);
    for l in 0..n_layer {
        for h in 0..n_head {
            out.push(head_scores(&maps.weights(l, h), t, maps.causal()));
        }
    }
    out
}

/// The repeated random-token text the induction and duplicate-token scores are read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// `half` distinct ids, then the same `half` ids again.
    pub ids: Vec<u32>,
    pub half: usize,
    pub seed: u64,
    /// Why `half` is smaller than asked (the context, or too few usable tokens), if it is.
    pub clamped: Option<String>,
}

/// The default probe length (tokens per copy) and seed.
pub const PROBE_LEN: usize = 32;
pub const PROBE_SEED: u64 = 2022;

impl Probe {
    /// A probe of `len` tokens per copy drawn from `candidates`, clamped to what fits in
    /// `context` positions (two copies) and to the number of candidates (they are distinct).
    pub fn from_candidates(candidates: &[u32], len: usize, seed: u64, context: usize) -> Probe {
        let fit = (context / 2).min(candidates.len());
        let half = len.min(fit);
        let clamped = (half < len).then(|| {
            let mut why = Vec::new();
            if len > context / 2 {
                why.push(format!("two copies must fit the context of {context}"));
            }
            if len > candidates.len() {
                why.push(format!(
                    "the vocabulary has only {} usable tokens",
                    candidates.len()
                ));
            }
            format!(
                "probe shortened from {len} to {half} tokens per copy: {}",
                why.join(", and ")
            )
        });
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut ids: Vec<u32> = candidates
            .choose_multiple(&mut rng, half)
            .copied()
            .collect();
        ids.extend_from_within(..);
        Probe {
            ids,
            half,
            seed,
            clamped,
        }
    }

    /// A probe for a model with this tokenizer and context.
    pub fn new(tokenizer: &Tokenizer, len: usize, seed: u64, context: usize) -> Probe {
        Probe::from_candidates(&tokenizer.probe_candidates(), len, seed, context)
    }

    /// The induction and duplicate-token scores of every head in the probe's run, index
    /// `layer * n_head + head`; `None` for a probe with no second copy.
    pub fn scores(&self, maps: &impl AttentionMaps) -> Vec<Scores> {
        probe_scores(maps, self.half)
    }
}

/// The induction and duplicate-token scores of every head in a probe's run of `half` ids
/// said twice (`Probe`), index `layer * n_head + head`: only the second copy's rows are read,
/// one head at a time (computed from the queries and keys where the run kept no maps).
/// `None` for a probe with no second copy.
///
/// # Panics
/// When the run is shorter than the probe (`2 * half` tokens).
pub fn probe_scores(maps: &impl AttentionMaps, half: usize) -> Vec<Scores> {
    let (n_layer, n_head, t) = maps.size();
    let n = half;
    assert!(t >= 2 * n, "the run is shorter than the probe");
    let mut out = Vec::with_capacity(n_layer * n_head);
    for l in 0..n_layer {
        for h in 0..n_head {
            let w = maps.weights(l, h);
            let (mut ind, mut dup) = (0f64, 0f64);
            for k in 0..n {
                let row = &w[(n + k) * t..(n + k + 1) * t];
                ind += row[k + 1] as f64;
                dup += row[k] as f64;
            }
            let mean = |s: f64| (n > 0).then(|| (s / n as f64).clamp(0.0, 1.0) as f32);
            let mut s = Scores::default();
            s.set(Role::Induction, mean(ind));
            s.set(Role::Duplicate, mean(dup));
            out.push(s);
        }
    }
    out
}

/// Averages scores over several texts, each score over the texts where it is defined.
#[derive(Clone, Debug, Default)]
pub struct Mean {
    sums: Vec<[(f64, usize); 7]>,
    texts: usize,
}

impl Mean {
    pub fn add(&mut self, scores: &[Scores]) {
        if self.sums.is_empty() {
            self.sums = vec![[(0.0, 0); 7]; scores.len()];
        }
        assert_eq!(
            self.sums.len(),
            scores.len(),
            "every text has the same heads"
        );
        for (acc, s) in self.sums.iter_mut().zip(scores) {
            for (slot, v) in acc.iter_mut().zip(s.0) {
                if let Some(v) = v {
                    slot.0 += v as f64;
                    slot.1 += 1;
                }
            }
        }
        self.texts += 1;
    }

    /// How many texts were added.
    pub fn texts(&self) -> usize {
        self.texts
    }

    pub fn finish(&self) -> Vec<Scores> {
        self.sums
            .iter()
            .map(|acc| Scores(acc.map(|(s, n)| (n > 0).then(|| (s / n as f64) as f32))))
            .collect()
    }
}

/// Every head's roles over some texts and the probe, as `attnlab heads` and the model card
/// report them.
#[derive(Clone, Debug)]
pub struct Report {
    /// Text roles averaged over the texts, probe roles from the probe; `layer * n_head + head`.
    pub scores: Vec<Scores>,
    pub n_head: usize,
    /// Texts that gave at least two tokens (shorter ones say nothing about a head).
    pub texts: usize,
    /// Texts longer than the context: their start was dropped, as the forward pass (and the
    /// page) does, keeping the last `context` tokens.
    pub truncated: usize,
    pub context: usize,
    pub probe: Probe,
}

/// The texts of a corpus: one per line, trimmed, empty lines left out (what `attnlab heads
/// --corpus` and the model card average over).
pub fn corpus_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect()
}

/// Runs every text (with `opts`) and the probe (always on the unmodified model, as the page
/// runs it) through the model and reports the roles. A text longer than the context keeps its
/// last `context` tokens, as the forward pass (and the page) does.
/// `progress(done, total)` is called after each text.
pub fn measure(
    subject: &impl Subject,
    texts: &[&str],
    probe: &Probe,
    opts: &AttentionOptions,
    mut progress: impl FnMut(usize, usize),
) -> Result<Report> {
    let context = subject.context();
    let (n_layer, n_head) = subject.heads();
    let (mut mean, mut truncated) = (Mean::default(), 0);
    for (i, text) in texts.iter().enumerate() {
        let ids = subject.tokenizer().ids(text)?;
        if ids.len() > context {
            truncated += 1;
        }
        if ids.len() >= 2 {
            let kept = &ids[ids.len().saturating_sub(context)..];
            mean.add(&text_scores(&subject.run(kept, opts)?));
        }
        progress(i + 1, texts.len());
    }
    // the probe measures the unmodified model, as the page runs it (once per model)
    let probe_scores = if probe.half > 0 {
        probe.scores(&subject.run(&probe.ids, &AttentionOptions::default())?)
    } else {
        vec![Scores::default(); n_layer * n_head]
    };
    let text = mean.finish();
    let scores = probe_scores
        .iter()
        .enumerate()
        .map(|(i, p)| text.get(i).copied().unwrap_or_default().with_probe(p))
        .collect();
    Ok(Report {
        scores,
        n_head,
        texts: mean.texts(),
        truncated,
        context,
        probe: probe.clone(),
    })
}

/// A markdown table of every head's scores and strongest role (what `attnlab heads
/// --format table` prints and the model card shows).
pub fn markdown_table(scores: &[Scores], n_head: usize) -> String {
    let mut s = String::from("| layer | head |");
    for r in Role::ALL {
        s.push_str(&format!(" {} |", r.code()));
    }
    s.push_str(" role |\n|---|---|");
    s.push_str(&"---:|".repeat(Role::ALL.len()));
    s.push_str("---|\n");
    for (i, sc) in scores.iter().enumerate() {
        s.push_str(&format!("| {} | {} |", i / n_head, i % n_head));
        for r in Role::ALL {
            match sc.get(r) {
                Some(v) => s.push_str(&format!(" {v:.3} |")),
                None => s.push_str(" — |"),
            }
        }
        match sc.strongest() {
            Some((r, _)) => s.push_str(&format!(" {} |\n", r.code())),
            None => s.push_str(" — |\n"),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forward::forward;
    use crate::testing::{random_model, tiny_config};
    use crate::LnPlacement;

    /// A (T, T) causal pattern from a function giving row i's weights.
    fn pattern(t: usize, row: impl Fn(usize) -> Vec<f32>) -> Vec<f32> {
        (0..t)
            .flat_map(|i| {
                let mut r = row(i);
                r.resize(t, 0.0);
                r
            })
            .collect()
    }

    fn one_hot(i: usize, j: usize) -> Vec<f32> {
        let mut r = vec![0.0; i + 1];
        r[j] = 1.0;
        r
    }

    #[test]
    fn a_pure_previous_token_pattern_is_previous_token_and_not_self() {
        let w = pattern(10, |i| one_hot(i, i.saturating_sub(1)));
        let s = head_scores(&w, 10, true);
        assert_eq!(s.get(Role::Previous), Some(1.0));
        assert_eq!(s.get(Role::SelfToken), Some(0.0));
        assert_eq!(s.get(Role::Local), Some(1.0));
        assert_eq!(s.get(Role::Broad), Some(0.0));
        // row 1's previous key is key 0: the first-token score is 1/9, not 0
        assert!((s.get(Role::First).unwrap() - 1.0 / 9.0).abs() < 1e-6);
        assert_eq!(s.strongest(), Some((Role::Previous, 1.0)));
    }

    #[test]
    fn uniform_rows_are_fully_broad() {
        let w = pattern(12, |i| vec![1.0 / (i + 1) as f32; i + 1]);
        let s = head_scores(&w, 12, true);
        assert!((s.get(Role::Broad).unwrap() - 1.0).abs() < 1e-5, "{s:?}");
        assert_eq!(s.strongest().map(|x| x.0), Some(Role::Broad));
        // without the mask a row is uniform over all keys
        let w: Vec<f32> = vec![1.0 / 12.0; 144];
        let s = head_scores(&w, 12, false);
        assert!((s.get(Role::Broad).unwrap() - 1.0).abs() < 1e-5);
    }

    #[test]
    fn a_sink_and_a_self_head() {
        let sink = head_scores(&pattern(6, |i| one_hot(i, 0)), 6, true);
        assert_eq!(sink.get(Role::First), Some(1.0));
        assert_eq!(sink.strongest().map(|x| x.0), Some(Role::First));
        let own = head_scores(&pattern(6, |i| one_hot(i, i)), 6, true);
        assert_eq!(own.get(Role::SelfToken), Some(1.0));
        assert_eq!(own.get(Role::Previous), Some(0.0));
        assert_eq!(own.strongest().map(|x| x.0), Some(Role::SelfToken));
    }

    #[test]
    fn short_texts_leave_scores_undefined() {
        let s = head_scores(&[1.0], 1, true);
        assert_eq!(s, Scores::default());
        let s = head_scores(&pattern(4, |i| one_hot(i, i)), 4, true);
        assert!(s.get(Role::Previous).is_some());
        assert_eq!(
            s.get(Role::Local),
            None,
            "no row has a key outside its window"
        );
        assert_eq!(s.strongest().map(|x| x.0), Some(Role::SelfToken));
    }

    #[test]
    fn thresholds_hold_at_the_boundary() {
        for role in Role::ALL {
            let mut s = Scores::default();
            s.set(role, Some(role.threshold()));
            assert!(s.has(role), "{role:?} at its threshold");
            assert_eq!(s.strongest(), Some((role, role.threshold())));
            s.set(role, Some(role.threshold() - 1e-4));
            assert!(!s.has(role), "{role:?} just under");
            assert_eq!(s.strongest(), None);
        }
    }

    #[test]
    fn the_widest_margin_wins() {
        let mut s = Scores::default();
        s.set(Role::Previous, Some(0.6)); // 1.5× its threshold
        s.set(Role::Local, Some(1.0)); // 1.33×
        s.set(Role::Broad, Some(0.5)); // under
        assert_eq!(s.strongest(), Some((Role::Previous, 0.6)));
    }

    #[test]
    fn a_hand_built_induction_pattern_scores_one() {
        let cands: Vec<u32> = (10..200).collect();
        let p = Probe::from_candidates(&cands, 8, 7, 64);
        assert_eq!((p.half, p.ids.len(), p.clamped.clone()), (8, 16, None));
        assert_eq!(p.ids[..8], p.ids[8..]);
        let mut distinct = p.ids[..8].to_vec();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 8, "the tokens of one copy are distinct");
        // a real trace's shape, with the patterns written into layer 0's two heads
        let cfg = crate::Config {
            n_positions: 16,
            ..tiny_config(LnPlacement::Post)
        };
        let ids: Vec<u32> = (0..16).map(|i| i % 20).collect();
        let mut tr = forward(
            &random_model(&cfg, 1, 0.5),
            &ids,
            &AttentionOptions::default(),
        )
        .unwrap();
        let t = tr.dims.t;
        let n = p.half;
        let induction = pattern(t, |i| {
            if i >= n {
                one_hot(i, i - n + 1)
            } else {
                one_hot(i, 0)
            }
        });
        let duplicate = pattern(t, |i| {
            if i >= n {
                one_hot(i, i - n)
            } else {
                one_hot(i, 0)
            }
        });
        tr.layers[0].weights[..t * t].copy_from_slice(&induction);
        tr.layers[0].weights[t * t..2 * t * t].copy_from_slice(&duplicate);
        let s = p.scores(&tr);
        assert_eq!(s[0].get(Role::Induction), Some(1.0));
        assert_eq!(s[0].get(Role::Duplicate), Some(0.0));
        assert_eq!(s[1].get(Role::Duplicate), Some(1.0));
        assert_eq!(s[1].get(Role::Induction), Some(0.0));
        assert_eq!(s[0].strongest().map(|x| x.0), Some(Role::Induction));
    }

    #[test]
    fn probes_are_seeded_and_clamped_with_a_reason() {
        let cands: Vec<u32> = (0..100).collect();
        let a = Probe::from_candidates(&cands, 20, 3, 128);
        assert_eq!(a, Probe::from_candidates(&cands, 20, 3, 128));
        assert_ne!(a.ids, Probe::from_candidates(&cands, 20, 4, 128).ids);
        let c = Probe::from_candidates(&cands, 80, 3, 128);
        assert_eq!(c.half, 64);
        assert!(c.clamped.unwrap().contains("context of 128"));
        // both reasons at once
        let both = Probe::from_candidates(&cands[..10], 500, 3, 64)
            .clamped
            .unwrap();
        assert!(
            both.contains("context of 64") && both.contains("only 10 usable"),
            "{both}"
        );
        let few = Probe::from_candidates(&cands[..10], 32, 3, 128);
        assert_eq!(few.half, 10);
        assert!(few.clamped.unwrap().contains("only 10 usable tokens"));
    }

    #[test]
    fn ablating_a_head_changes_only_later_layers_scores() {
        let model = random_model(&tiny_config(LnPlacement::Post), 9, 1.0);
        let ids = [1, 5, 2, 7, 3, 9, 4, 6];
        let base = text_scores(&forward(&model, &ids, &AttentionOptions::default()).unwrap());
        let opts = AttentionOptions {
            ablate: [(0, 1)].into_iter().collect(),
            ..Default::default()
        };
        let ablated = text_scores(&forward(&model, &ids, &opts).unwrap());
        let nh = model.config.n_head;
        assert_eq!(
            base[..nh],
            ablated[..nh],
            "layer 0 (the ablated head's own) is unchanged"
        );
        assert_ne!(
            base[nh..],
            ablated[nh..],
            "layer 1 reads the ablated output"
        );
    }

    #[test]
    fn the_mean_counts_each_score_where_it_is_defined() {
        let mut m = Mean::default();
        let mut a = Scores::default();
        a.set(Role::Previous, Some(0.2));
        a.set(Role::Local, Some(0.9));
        let mut b = Scores::default();
        b.set(Role::Previous, Some(0.6));
        m.add(&[a]);
        m.add(&[b]);
        let out = m.finish();
        assert!((out[0].get(Role::Previous).unwrap() - 0.4).abs() < 1e-6);
        assert_eq!(out[0].get(Role::Local), Some(0.9));
        assert_eq!(out[0].get(Role::Broad), None);
        assert_eq!(m.texts(), 2);
    }

    #[test]
    fn the_table_names_every_head_and_its_role() {
        let mut s = Scores::default();
        s.set(Role::Previous, Some(0.75));
        let table = markdown_table(&[s, Scores::default()], 2);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("| previous |") && lines[0].ends_with("role |"));
        assert!(
            lines[2].starts_with("| 0 | 0 | 0.750 | — |") && lines[2].ends_with("| previous |")
        );
        assert!(lines[3].starts_with("| 0 | 1 | — |") && lines[3].ends_with("| — |"));
    }
}
