//! The result on screen (`Results`): a forward pass as shown, the comparison's second text,
//! the logit lens and the head-role probe.

use std::rc::Rc;

use attnlab_model::flow::Method;
use attnlab_model::roles::Scores;
use attnlab_model::{TokenInfo, Trace};

use super::request::{Generated, Request};
use crate::engine::Reply;

/// One forward pass's result as shown on the page: what the engine answered (`run`: the
/// trace, the backend, its timings) with the page's side of it (the text, its tokens, the
/// heads' roles).
#[derive(Clone, Debug)]
pub struct Shown {
    /// The runner's request number (increases with every request).
    pub generation: u64,
    /// Which engines computed it (`ModelStatus::engines`), and the request it answers.
    pub engine: u64,
    pub asked: Rc<Request>,
    pub text: String,
    pub tokens: Rc<Vec<TokenInfo>>,
    /// The engine's answer: the trace, its baseline, where it ran, how long it took.
    pub run: Reply,
    /// The text roles of every head in the trace (`layer * n_head + head`).
    pub roles: Rc<Vec<Scores>>,
    /// The second text's run, when comparing.
    pub b: Option<Rc<Side>>,
    /// Why this result was computed on the CPU although the GPU engine runs (a text longer
    /// than a big model's GPU buffers hold).
    pub cpu_because: Option<String>,
    /// `performance.now()` of the input event this answers, and of the result's arrival,
    /// for the latency measurement.
    pub input_at: f64,
    pub result_at: f64,
    /// A step of a generation (the text box shows the text with the token that landed).
    pub generated: Option<Rc<Generated>>,
}

/// What the CPU worker computed for a view of a result, at `at` (or why it could not).
/// Equal by pointer for the numbers (there may be millions: comparing props must not read
/// them).
#[derive(Clone, Debug)]
pub struct Asked<At> {
    /// The result (`Shown::generation`) it is of.
    pub of: u64,
    pub at: At,
    pub values: Result<Rc<Vec<f32>>, String>,
}

/// The logit lens of a result at a position: every stage's next-token distribution
/// (stages × V, the embedding first), from the result's residual rows.
pub type LensResult = Asked<usize>;

/// The attention-flow strip of a slim result for (query, method): (layers × T).
pub type FlowResult = Asked<(usize, Method)>;

impl<At: PartialEq> PartialEq for Asked<At> {
    fn eq(&self, other: &Self) -> bool {
        self.of == other.of
            && self.at == other.at
            && match (&self.values, &other.values) {
                (Ok(a), Ok(b)) => Rc::ptr_eq(a, b),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

/// The second text of a comparison, run with the same options as the first.
#[derive(Debug)]
pub struct Side {
    pub text: String,
    /// Its tokens and trace, or why there are none ("" for an empty text).
    pub run: Result<(Rc<Vec<TokenInfo>>, Rc<Trace>), String>,
}

impl PartialEq for Side {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && match (&self.run, &other.run) {
                (Ok((_, a)), Ok((_, b))) => Rc::ptr_eq(a, b),
                (Err(a), Err(b)) => a == b,
                _ => false,
            }
    }
}

impl PartialEq for Shown {
    fn eq(&self, other: &Self) -> bool {
        self.generation == other.generation && Rc::ptr_eq(&self.run.trace, &other.run.trace)
    }
}

/// The head-role probe of the loaded model: induction and duplicate-token scores from a
/// repeated random-token text, run once per model with default options.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeResult {
    /// `layer * n_head + head`; only the probe's roles are set.
    pub scores: Vec<Scores>,
    /// Tokens per copy, the seed of their draw, and why fewer than asked (if so).
    pub half: usize,
    pub seed: u64,
    pub clamped: Option<String>,
}

/// The result on screen, or why there is none.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub shown: Option<Shown>,
    /// Why the current text produced no result (empty input, tokenizer error).
    pub error: Option<String>,
    /// The model's head-role probe: None while it runs, else its result or why it failed.
    pub probe: Option<Result<Rc<ProbeResult>, String>>,
    /// The latest logit lens (of the result on screen, or of an earlier one until the next
    /// arrives).
    pub lens: Option<Rc<LensResult>>,
    /// The latest prediction after a picked token of a slim result (`Action::Prediction`:
    /// the lens's last stage alone, V values).
    pub prediction: Option<Rc<LensResult>>,
    /// The latest attention-flow strip the worker computed (slim results only).
    pub flow: Option<Rc<FlowResult>>,
}

impl Results {
    /// Whether the result on screen is the one numbered `generation`.
    pub fn is_shown(&self, generation: u64) -> bool {
        self.shown.as_ref().map(|s| s.generation) == Some(generation)
    }
}
