//! How the page is displayed, apart from what it shows: the colour theme, and one view on its
//! own — embedded in another page's frame (`#…&embed=head`) or presented full-screen with
//! large type (the "present" control, or F).

use crate::i18n::{Key, Lang};
use crate::lesson::LESSON_SECTIONS;

/// The colour theme: the system's (`prefers-color-scheme`), or one chosen (`theme=` in the URL).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Theme {
    #[default]
    Auto,
    Light,
    Dark,
}

impl Theme {
    pub const ALL: [Theme; 3] = [Theme::Auto, Theme::Light, Theme::Dark];

    pub fn code(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    pub fn from_code(s: &str) -> Option<Theme> {
        Theme::ALL.into_iter().find(|t| t.code() == s)
    }

    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            Theme::Auto => Key::ThemeAuto.text(lang),
            Theme::Light => Key::ThemeLight.text(lang),
            Theme::Dark => Key::ThemeDark.text(lang),
        }
    }

    /// Whether the page is dark, given whether the system prefers dark.
    pub fn is_dark(self, system_dark: bool) -> bool {
        match self {
            Theme::Auto => system_dark,
            Theme::Light => false,
            Theme::Dark => true,
        }
    }
}

/// One view of the page, shown on its own (embedded or presented).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Solo {
    Tokens,
    Heads,
    Head,
    Flow,
    Roles,
    Steps,
    Softmax,
    Sum,
    Next,
    Generate,
    Lens,
    /// A lesson section (0-based here, `lesson-1` … in the URL).
    Lesson(usize),
}

impl Solo {
    /// Every view but the lesson's sections, in the page's order.
    pub const VIEWS: [Solo; 11] = [
        Solo::Tokens,
        Solo::Heads,
        Solo::Head,
        Solo::Flow,
        Solo::Roles,
        Solo::Steps,
        Solo::Softmax,
        Solo::Sum,
        Solo::Next,
        Solo::Generate,
        Solo::Lens,
    ];

    /// Every view, the lesson's sections included (`lesson-1` … `lesson-9`).
    pub fn all() -> impl Iterator<Item = Solo> {
        Solo::VIEWS
            .into_iter()
            .chain((0..LESSON_SECTIONS).map(Solo::Lesson))
    }

    pub fn code(self) -> String {
        match self {
            Solo::Tokens => "tokens".into(),
            Solo::Heads => "heads".into(),
            Solo::Head => "head".into(),
            Solo::Flow => "flow".into(),
            Solo::Roles => "roles".into(),
            Solo::Steps => "steps".into(),
            Solo::Softmax => "softmax".into(),
            Solo::Sum => "sum".into(),
            Solo::Next => "next".into(),
            Solo::Generate => "generate".into(),
            Solo::Lens => "lens".into(),
            Solo::Lesson(i) => format!("lesson-{}", i + 1),
        }
    }

    pub fn from_code(s: &str) -> Option<Solo> {
        if let Some(n) = s.strip_prefix("lesson-") {
            return match n.parse::<usize>() {
                Ok(n) if (1..=LESSON_SECTIONS).contains(&n) => Some(Solo::Lesson(n - 1)),
                _ => None,
            };
        }
        Solo::VIEWS.into_iter().find(|v| v.code() == s)
    }

    /// The view's name, as its card's title says it.
    pub fn label(self, lang: Lang) -> String {
        let key = match self {
            Solo::Tokens => Key::Tokens,
            Solo::Heads => Key::AllHeads,
            Solo::Head => Key::SelectedHead,
            Solo::Flow => Key::FlowTitle,
            Solo::Roles => Key::HeadRoles,
            Solo::Steps => Key::Steps,
            Solo::Softmax => Key::Compare,
            Solo::Sum => Key::WeightedSum,
            Solo::Next => Key::NextToken,
            Solo::Generate => Key::GenTitle,
            Solo::Lens => Key::LensTitle,
            Solo::Lesson(i) => {
                return format!("{} {}", Key::LessonTitle.text(lang), i + 1);
            }
        };
        key.text(lang).to_string()
    }

    /// The CSS selector of the view's card on the page.
    pub fn card_selector(self) -> &'static str {
        match self {
            Solo::Tokens => ".tokens-card",
            Solo::Heads => ".heads-card",
            Solo::Head => ".head-card",
            Solo::Flow => ".flow-card",
            Solo::Roles => ".roles-card",
            Solo::Steps => ".steps-card",
            Solo::Softmax => ".compare-card:not(#compare)",
            Solo::Sum => ".sum-card",
            Solo::Next => ".next-card",
            Solo::Generate => ".gen-card",
            Solo::Lens => ".lens-card",
            Solo::Lesson(_) => ".lesson-card",
        }
    }

    /// Whether the text box belongs beside this view (the lesson has its own inputs, and the
    /// token strip is the text).
    pub fn wants_input(self) -> bool {
        !matches!(self, Solo::Lesson(_))
    }
}

/// How the page is laid out: all of it, or one view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Display {
    pub theme: Theme,
    /// Embed mode: only this view, for another page's frame (fixed by the URL).
    pub embed: Option<Solo>,
    /// Embed mode's text box (`input=0` leaves it out).
    pub input: bool,
    /// Presenting this view full-screen with large type.
    pub present: Option<Solo>,
}

impl Display {
    pub fn new() -> Display {
        Display {
            input: true,
            ..Display::default()
        }
    }

    /// The view shown on its own, if any: the presented one over the embedded one.
    pub fn solo(&self) -> Option<Solo> {
        self.present.or(self.embed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_code_reads_back() {
        let all: Vec<Solo> = Solo::all().collect();
        assert_eq!(all.len(), Solo::VIEWS.len() + LESSON_SECTIONS);
        for v in all {
            assert_eq!(Solo::from_code(&v.code()), Some(v), "{}", v.code());
        }
        assert_eq!(Solo::from_code("lesson-0"), None);
        assert_eq!(
            Solo::from_code(&format!("lesson-{}", LESSON_SECTIONS + 1)),
            None
        );
        assert_eq!(Solo::from_code("lesson-x"), None);
        assert_eq!(Solo::from_code("Head"), None, "codes are exact");
        for t in Theme::ALL {
            assert_eq!(Theme::from_code(t.code()), Some(t));
        }
    }

    #[test]
    fn the_theme_follows_the_system_only_on_auto() {
        assert!(Theme::Auto.is_dark(true) && !Theme::Auto.is_dark(false));
        assert!(Theme::Dark.is_dark(false) && !Theme::Light.is_dark(true));
    }

    #[test]
    fn presenting_wins_over_the_embedded_view() {
        let mut d = Display::new();
        assert_eq!(d.solo(), None);
        d.embed = Some(Solo::Heads);
        assert_eq!(d.solo(), Some(Solo::Heads));
        d.present = Some(Solo::Lesson(2));
        assert_eq!(d.solo(), Some(Solo::Lesson(2)));
    }
}
