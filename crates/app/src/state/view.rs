//! What the user looks at (`View`): the text, the head, query and cell selected, lesson
//! mode, the comparison, a pinned row, the flow method and the generation settings.

use attnlab_model::flow::Method;
use attnlab_model::roles::Role;
use attnlab_model::TokenInfo;
use std::rc::Rc;

use super::request::{GenRun, GenSettings};

/// What the user looks at: the text and what is selected in it.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The text in the text box: typed, put there by the page (a preset), or a generation's
    /// step as it landed.
    pub text: String,
    /// When the text is a generation's: the text it started from and the ids it appended,
    /// run exactly as generated (not re-tokenized).
    pub exact: Option<Rc<(String, Vec<u32>)>>,
    /// `performance.now()` of the input event that changed the text last, until something
    /// else changes the request (None: the request's own time), for the latency measurement.
    pub input_at: Option<f64>,
    pub layer: usize,
    pub head: usize,
    /// The token picked for the weighted-sum and next-token views (None: the last one).
    pub query: Option<usize>,
    /// The cell under the mouse or keyboard focus in the selected head, (query, key).
    pub cell: Option<(usize, usize)>,
    /// The open lesson section (0-based), or None when lesson mode is off.
    pub lesson: Option<usize>,
    /// Counts the texts the page put in the text box (lesson presets).
    pub preset_n: u32,
    /// Only heads with this role stand out in the all-heads grid.
    pub role_filter: Option<Role>,
    /// The second text compared with the first (None: comparing is off).
    pub compare: Option<String>,
    /// The last second text, kept while comparing is off (switching it on again restores it).
    pub compare_last: String,
    /// A pinned query token: it stays the query, highlighted, across keystrokes while the
    /// text up to it is unchanged.
    pub pin: Option<Pin>,
    /// What the selected head's map shows: raw attention, value-weighted, or rollout.
    pub flow: Method,
    /// The first result picks the head to show (`lesson::clearest_head`): nobody chose one
    /// yet (no head in the link, no click).
    pub auto_head: bool,
    /// How the Generate control samples.
    pub gen: GenSettings,
    /// The latest generation, and where it stands.
    pub gen_run: Option<GenRun>,
}

/// A pinned query: the token's index in the text's tokens and the text up to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct Pin {
    pub token: usize,
    pub before: String,
}

impl Pin {
    /// The pin of `tokens[token]` in `text`, if it exists.
    pub fn of(text: &str, tokens: &[TokenInfo], token: usize) -> Option<Pin> {
        let end = tokens.get(token)?.span.1;
        Some(Pin {
            token,
            before: text.chars().take(end).collect(),
        })
    }

    /// Whether `tokens` of `text` still hold the pinned token: the text up to it is unchanged
    /// and the token there ends where it did.
    pub fn holds(&self, text: &str, tokens: &[TokenInfo]) -> bool {
        text.starts_with(&self.before)
            && tokens
                .get(self.token)
                .is_some_and(|t| t.span.1 == self.before.chars().count())
    }
}

pub enum ViewAction {
    SelectHead(usize, usize),
    SelectQuery(usize),
    FocusCell(Option<(usize, usize)>),
    /// Open a lesson section (0-based), or close lesson mode.
    SetLesson(Option<usize>),
    /// The text box's text, typed, and `performance.now()` of the input event.
    Type(String, f64),
    /// Put a text in the text box (a lesson preset, a next token clicked) and run it.
    Preset(String, f64),
    FilterRole(Option<Role>),
    /// Compare with a second text (its starting value), or stop comparing.
    SetCompare(Option<String>),
    /// Comparing on (with the last second text; the first time, the text with 커피 → 차,
    /// the lesson's pair) or off.
    ToggleCompare(bool),
    SetFlow(Method),
    /// Pin a query row of the run on screen (a second pin of the same row, or None, unpins).
    Pin(Option<usize>),
    SetGen(GenSettings),
    /// Generate from the text in the box with the settings (`gen`), or stop generating.
    GenStart,
    GenStop,
}
