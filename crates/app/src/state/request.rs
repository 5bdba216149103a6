//! What the page asks the engine (`Request`), derived from the state alone
//! (`State::request`): the engine hook runs it when it changes, and `plan` says how. A
//! generation is asked for like a text (`GenAsk`); its steps come back as results
//! (`Generated`) and move `GenRun` on, without changing the request.

use std::rc::Rc;

use attnlab_model::sample::Sampling;
use attnlab_model::AttentionOptions;

use crate::engine::Preference;

/// What the page asks for. Equal requests give equal results: a result carries the request
/// it answers (`Shown::asked`).
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The text, and the ids appended to it exactly (a generation's, not re-tokenized).
    pub text: String,
    pub appended: Rc<Vec<u32>>,
    /// The second text, when comparing (run after the first, with the same options).
    pub compare: Option<String>,
    pub opts: AttentionOptions,
    pub preference: Preference,
    /// Generate from the text on: the engine runs one step after the other, each shown.
    pub generate: Option<GenAsk>,
}

/// The generation settings (the Generate control; in the URL). `steps` tokens are appended
/// one by one, each chosen by `attnlab_model::sample::Sampling` from these settings.
#[derive(Clone, Debug, PartialEq)]
pub struct GenSettings {
    pub steps: usize,
    pub sampling: attnlab_model::sample::Sampling,
}

/// The most tokens one Generate appends.
pub const GEN_MAX_STEPS: usize = 64;

impl Default for GenSettings {
    fn default() -> Self {
        GenSettings {
            steps: 8,
            sampling: attnlab_model::sample::Sampling::default(),
        }
    }
}

/// A generation asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct GenAsk {
    /// Which press of Generate (a new run each time).
    pub nonce: u64,
    pub steps: usize,
    pub sampling: Sampling,
}

/// How the engine answers a changed request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run it (newest first, older results dropped).
    Run,
    /// Start the generation it asks for.
    Generate,
    /// Nothing: the result on screen answers it (a text typed and deleted again, a
    /// generation stopped or ended). Whatever is still running or queued is dropped.
    Withdraw,
}

/// How to answer `asked`, given the request the result on screen answers (`shown`, if there
/// is one from the engine running now).
pub fn plan(asked: &Request, shown: Option<&Request>) -> Plan {
    if asked.generate.is_some() {
        return Plan::Generate;
    }
    let same = shown.is_some_and(|s| {
        s.text == asked.text
            && s.appended == asked.appended
            && s.compare == asked.compare
            && s.opts == asked.opts
            && s.preference == asked.preference
    });
    if same {
        Plan::Withdraw
    } else {
        Plan::Run
    }
}

/// Why a generation ended by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenEnd {
    /// Every step asked for ran.
    Done,
    /// The text fills the model's context.
    Context,
}

/// A generation's step, as its result carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub nonce: u64,
    /// The text the ids are appended to, and every id appended to it (those of earlier
    /// runs first: a run continues from exactly the ids on screen).
    pub base: String,
    pub ids: Vec<u32>,
    /// How many of `ids` this run appended (the last ones).
    pub done: usize,
    pub end: Option<GenEnd>,
}

/// Where the Generate control stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GenStatus {
    Idle,
    /// Step `done` of `total` is being computed.
    Running {
        done: usize,
        total: usize,
    },
    Done(usize),
    Stopped(usize),
    /// The text reached the model's context after `n` tokens.
    Context(usize),
    /// The text already fills the context: nothing was appended.
    ContextFull,
    /// The text was changed after `n` tokens.
    Changed(usize),
}

/// The latest generation: where it started, what it appended, where it stands.
#[derive(Clone, Debug, PartialEq)]
pub struct GenRun {
    pub ask: GenAsk,
    /// The text and the exactly appended ids it started from.
    pub from: Rc<(String, Vec<u32>)>,
    /// The ids this run appended so far.
    pub appended: Vec<u32>,
    pub status: GenStatus,
}

impl GenRun {
    /// A run from the text in the box (as generated, when it is a generation's) with the
    /// view's settings; numbered after the last one.
    pub fn start(
        last: Option<&GenRun>,
        text: &str,
        exact: Option<&Rc<(String, Vec<u32>)>>,
        settings: &GenSettings,
    ) -> GenRun {
        let from = match exact {
            Some(e) => e.clone(),
            None => Rc::new((text.to_string(), Vec::new())),
        };
        GenRun {
            ask: GenAsk {
                nonce: last.map_or(1, |g| g.ask.nonce + 1),
                steps: settings.steps,
                sampling: settings.sampling.clone(),
            },
            from,
            appended: Vec::new(),
            status: GenStatus::Running {
                done: 1,
                total: settings.steps,
            },
        }
    }

    pub fn running(&self) -> bool {
        matches!(self.status, GenStatus::Running { .. })
    }

    /// Moves on with step `g`, if it is this run's.
    pub fn land(&mut self, g: &Generated) -> bool {
        if g.nonce != self.ask.nonce {
            return false;
        }
        self.appended = g.ids[g.ids.len() - g.done..].to_vec();
        self.status = match g.end {
            Some(GenEnd::Done) => GenStatus::Done(g.done),
            Some(GenEnd::Context) => GenStatus::Context(g.done),
            None => GenStatus::Running {
                done: g.done + 1,
                total: self.ask.steps,
            },
        };
        true
    }
}
