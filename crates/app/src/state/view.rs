//! What the user looks at (`View`): the text, the head, query and cell selected, lesson
//! mode, the comparison, a pinned row, the flow method and the generation settings.

use attnlab_model::flow::Method;
use attnlab_model::roles::Role;
use attnlab_model::TokenInfo;

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

/// What the user looks at: the text and what is selected in it.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The text of the result on screen (the text box may be ahead of it while typing).
    pub text: String,
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
    /// Put a text in the text box (a lesson preset).
    Preset(String),
    FilterRole(Option<Role>),
    /// Compare with a second text (its starting value), or stop comparing.
    SetCompare(Option<String>),
    SetFlow(Method),
    /// Pin a query row of the run on screen (a second pin of the same row, or None, unpins).
    Pin(Option<usize>),
    SetGen(GenSettings),
}
