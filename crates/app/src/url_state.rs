//! The page's state in the URL fragment, so a link restores exactly what was on screen:
//! `#t=<text>&b=<second text>&lang=ko&l=1&h=2&q=3&v=temperature&tau=0.5&apply=1&mask=0&ablate=0.1,2.3&backend=cpu`,
//! and the Generate control's settings when they are not the defaults
//! (`gen=8&greedy=0&out_t=0.8&top_k=40&top_p=0.9&seed=7`; an empty top-k/top-p: no limit),
//! the theme when one was chosen (`theme=dark`), a real model (`model=smollm2`, a served one; `model=hf:org/name`, a Hugging Face id, fetched
//! from `hub=URL` when given), and embed mode (`embed=head&input=0`: one
//! view for another page's frame, `display`).
//! Parsing never fails: unknown or malformed parameters are skipped and reported as notices
//! (plain text, never markup).

use std::collections::BTreeSet;

use crate::compare::Variant;
use crate::engine::Preference;
use crate::i18n::Lang;
use crate::lesson::LESSON_SECTIONS;
use crate::state::{State, TAU_MAX, TAU_MIN};

/// Longest text taken from a URL (characters); longer ones are cut with a notice.
pub const MAX_TEXT: usize = 20_000;

/// What a URL fragment asks for; `None` = not given (keep the default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UrlState {
    pub text: Option<String>,
    pub lang: Option<Lang>,
    pub layer: Option<usize>,
    pub head: Option<usize>,
    pub query: Option<usize>,
    pub variant: Option<Variant>,
    pub tau: Option<f32>,
    pub apply: Option<bool>,
    pub mask: Option<bool>,
    pub ablate: Option<BTreeSet<(usize, usize)>>,
    /// The open lesson section, 1-based in the URL (`lesson=4`), 0-based here.
    pub lesson: Option<usize>,
    /// The backend asked for (`auto`, `webgpu`, `cpu`).
    pub backend: Option<Preference>,
    /// The second text of a comparison (`b=`).
    pub compare: Option<String>,
    /// What the head map shows (`flow=value|rollout`; raw is the default).
    pub flow: Option<attnlab_model::flow::Method>,
    /// The Generate control's settings, each as given.
    pub gen_steps: Option<usize>,
    pub gen_greedy: Option<bool>,
    pub gen_temperature: Option<f32>,
    pub gen_top_k: Option<Option<usize>>,
    pub gen_top_p: Option<Option<f32>>,
    pub gen_seed: Option<u64>,
    /// The colour theme (`theme=auto|light|dark`).
    pub theme: Option<crate::display::Theme>,
    /// Embed mode: only this view (`embed=head`, `embed=lesson-4`, …).
    pub embed: Option<crate::display::Solo>,
    /// Embed mode's text box (`input=0`: none).
    pub input: Option<bool>,
    /// A model to load (`model=smollm2`, `model=hf:org/name`), and where Hugging Face ids
    /// are fetched from (`hub=URL`).
    pub model: Option<crate::state::ModelSource>,
    pub hub: Option<String>,
}

/// `%XX` and `+` decoding; invalid escapes are kept as they are, invalid UTF-8 replaced.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes everything but unreserved ASCII.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

fn flag(v: &str) -> Option<bool> {
    match v {
        "1" | "true" | "on" => Some(true),
        "0" | "false" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a fragment (with or without the leading `#`). Returns the state it asks for and
/// one notice per parameter it ignored.
pub fn parse(fragment: &str) -> (UrlState, Vec<String>) {
    let mut st = UrlState::default();
    let mut notices = Vec::new();
    let frag = fragment.strip_prefix('#').unwrap_or(fragment);
    for pair in frag.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, val) = (percent_decode(k), percent_decode(v));
        let shown: String = key.chars().take(40).collect();
        let mut bad = || {
            notices.push(format!(
                "{shown}={}",
                val.chars().take(40).collect::<String>()
            ))
        };
        match key.as_str() {
            "t" | "b" => {
                let text = if val.chars().count() > MAX_TEXT {
                    notices.push(format!("{key}: longer than {MAX_TEXT} characters, cut"));
                    val.chars().take(MAX_TEXT).collect()
                } else {
                    val
                };
                if key == "t" {
                    st.text = Some(text);
                } else {
                    st.compare = Some(text);
                }
            }
            "lang" => match val.as_str() {
                "ko" => st.lang = Some(Lang::Ko),
                "en" => st.lang = Some(Lang::En),
                _ => bad(),
            },
            "l" | "h" | "q" => match val.parse::<usize>() {
                Ok(n) if n < 10_000 => match key.as_str() {
                    "l" => st.layer = Some(n),
                    "h" => st.head = Some(n),
                    _ => st.query = Some(n),
                },
                _ => bad(),
            },
            "v" => match Variant::ALL.iter().find(|v| v.code() == val) {
                Some(&v) => st.variant = Some(v),
                None => bad(),
            },
            "tau" => match val.parse::<f32>() {
                Ok(t) if t.is_finite() && (TAU_MIN..=TAU_MAX).contains(&t) => st.tau = Some(t),
                _ => bad(),
            },
            "apply" => match flag(&val) {
                Some(b) => st.apply = Some(b),
                None => bad(),
            },
            "mask" => match flag(&val) {
                Some(b) => st.mask = Some(b),
                None => bad(),
            },
            "flow" => match attnlab_model::flow::Method::from_code(&val) {
                Some(m) => st.flow = Some(m),
                None => bad(),
            },
            "gen" => match val.parse::<usize>() {
                Ok(n) if (1..=crate::state::GEN_MAX_STEPS).contains(&n) => st.gen_steps = Some(n),
                _ => bad(),
            },
            "greedy" => match flag(&val) {
                Some(b) => st.gen_greedy = Some(b),
                None => bad(),
            },
            "out_t" => match val.parse::<f32>() {
                Ok(t) if t.is_finite() && t > 0.0 => st.gen_temperature = Some(t),
                _ => bad(),
            },
            "top_k" => match val.as_str() {
                "" => st.gen_top_k = Some(None),
                k => match k.parse::<usize>() {
                    Ok(k) if k >= 1 => st.gen_top_k = Some(Some(k)),
                    _ => bad(),
                },
            },
            "top_p" => match val.as_str() {
                "" => st.gen_top_p = Some(None),
                p => match p.parse::<f32>() {
                    Ok(p) if p.is_finite() && p > 0.0 && p <= 1.0 => st.gen_top_p = Some(Some(p)),
                    _ => bad(),
                },
            },
            "seed" => match val.parse::<u64>() {
                Ok(n) => st.gen_seed = Some(n),
                _ => bad(),
            },
            "theme" => match crate::display::Theme::from_code(&val) {
                Some(t) => st.theme = Some(t),
                None => bad(),
            },
            "embed" => match crate::display::Solo::from_code(&val) {
                Some(v) => st.embed = Some(v),
                None => bad(),
            },
            "input" => match flag(&val) {
                Some(b) => st.input = Some(b),
                None => bad(),
            },
            "model" => match crate::state::ModelSource::from_code(&val) {
                Some(m) => st.model = Some(m),
                None => bad(),
            },
            "hub" => match crate::loader::hub_base(&val) {
                Ok(b) => st.hub = Some(b),
                Err(_) => bad(),
            },
            "backend" => match Preference::from_code(&val) {
                Some(p) => st.backend = Some(p),
                None => bad(),
            },
            "lesson" => match val.parse::<usize>() {
                Ok(n) if (1..=LESSON_SECTIONS).contains(&n) => st.lesson = Some(n - 1),
                _ => bad(),
            },
            "ablate" => {
                let heads: Option<BTreeSet<(usize, usize)>> = val
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(|lh| {
                        let (l, h) = lh.split_once('.')?;
                        let (l, h) = (l.parse::<usize>().ok()?, h.parse::<usize>().ok()?);
                        (l < 1000 && h < 1000).then_some((l, h))
                    })
                    .collect();
                match heads {
                    Some(set) => st.ablate = Some(set),
                    None => bad(),
                }
            }
            _ => bad(),
        }
    }
    (st, notices)
}

impl UrlState {
    /// Applies what was given to `s` (sizes are checked against the model later).
    pub fn apply_to(&self, s: &mut State) {
        let (v, iv) = (&mut s.view, &mut s.interventions);
        if let Some(t) = &self.text {
            v.text = t.clone();
        }
        if let Some(l) = self.lang {
            s.lang = l;
        }
        if let Some(l) = self.layer {
            v.layer = l;
            v.auto_head = false;
        }
        if let Some(h) = self.head {
            v.head = h;
            v.auto_head = false;
        }
        if self.query.is_some() {
            v.query = self.query;
        }
        if let Some(x) = self.variant {
            iv.variant = x;
        }
        if let Some(t) = self.tau {
            iv.tau = t;
        }
        if let Some(a) = self.apply {
            iv.apply = a;
        }
        if let Some(m) = self.mask {
            iv.mask = m;
        }
        if let Some(a) = &self.ablate {
            iv.ablate = a.clone();
        }
        if self.lesson.is_some() {
            v.lesson = self.lesson;
        }
        if let Some(p) = self.backend {
            s.model.preference = p;
        }
        if self.model.is_some() {
            s.model.asked = self.model.clone();
        }
        if self.hub.is_some() {
            s.model.hub = self.hub.clone();
        }
        if let Some(m) = self.flow {
            v.flow = m;
        }
        if let Some(b) = &self.compare {
            v.compare = Some(b.clone());
            v.compare_last = b.clone();
        }
        let g = &mut v.gen;
        if let Some(n) = self.gen_steps {
            g.steps = n;
        }
        if let Some(b) = self.gen_greedy {
            g.sampling.greedy = b;
        }
        if let Some(t) = self.gen_temperature {
            g.sampling.temperature = t;
        }
        if let Some(k) = self.gen_top_k {
            g.sampling.top_k = k;
        }
        if let Some(p) = self.gen_top_p {
            g.sampling.top_p = p;
        }
        if let Some(n) = self.gen_seed {
            g.sampling.seed = n;
        }
        if let Some(t) = self.theme {
            s.display.theme = t;
        }
        if let Some(e) = self.embed {
            if let crate::display::Solo::Lesson(i) = e {
                s.view.lesson = Some(i);
            }
            s.display.embed = Some(e);
        }
        if let Some(i) = self.input {
            s.display.input = i;
        }
    }
}

/// The fragment for the state on screen (every parameter, so the link is exact).
pub fn fragment(s: &State) -> String {
    format!("{}{}", page_fragment(s), embed_suffix(&s.display))
}

/// What embed mode adds to the whole page's fragment (`&embed=head&input=0`; "" when none).
pub fn embed_suffix(d: &crate::display::Display) -> String {
    match d.embed {
        Some(e) if !d.input => format!("&embed={}&input=0", e.code()),
        Some(e) => format!("&embed={}", e.code()),
        None => String::new(),
    }
}

/// The fragment for the whole page with the same state: what an embedded view's "open in
/// attnlab" link opens (no `embed`, no `input`).
pub fn page_fragment(s: &State) -> String {
    let (v, iv) = (&s.view, &s.interventions);
    let ablate: Vec<String> = iv.ablate.iter().map(|(l, h)| format!("{l}.{h}")).collect();
    let mut parts = vec![format!("t={}", percent_encode(&v.text))];
    if let Some(b) = &v.compare {
        parts.push(format!("b={}", percent_encode(b)));
    }
    parts.extend([
        format!("lang={}", s.lang.code()),
        format!("l={}", v.layer),
        format!("h={}", v.head),
    ]);
    if let Some(q) = v.query {
        parts.push(format!("q={q}"));
    }
    parts.extend([
        format!("v={}", iv.variant.code()),
        format!("tau={}", iv.tau),
        format!("apply={}", u8::from(iv.apply)),
        format!("mask={}", u8::from(iv.mask)),
        format!("ablate={}", percent_encode(&ablate.join(","))),
    ]);
    if let Some(i) = v.lesson {
        parts.push(format!("lesson={}", i + 1));
    }
    if v.flow != attnlab_model::flow::Method::Raw {
        parts.push(format!("flow={}", v.flow.code()));
    }
    if s.model.preference != Preference::Auto {
        parts.push(format!("backend={}", s.model.preference.code()));
    }
    // the model running, or the one asked for while it loads
    let model = s
        .model
        .source
        .code()
        .or_else(|| s.model.asked.as_ref().and_then(|a| a.code()));
    if let Some(code) = model {
        parts.push(format!("model={}", percent_encode(&code)));
    }
    if let Some(hub) = &s.model.hub {
        parts.push(format!("hub={}", percent_encode(hub)));
    }
    if v.gen != crate::state::GenSettings::default() {
        let g = &v.gen.sampling;
        let opt = |x: Option<String>| x.unwrap_or_default();
        parts.extend([
            format!("gen={}", v.gen.steps),
            format!("greedy={}", u8::from(g.greedy)),
            format!("out_t={}", g.temperature),
            format!("top_k={}", opt(g.top_k.map(|k| k.to_string()))),
            format!("top_p={}", opt(g.top_p.map(|p| p.to_string()))),
            format!("seed={}", g.seed),
        ]);
    }
    if s.display.theme != crate::display::Theme::Auto {
        parts.push(format!("theme={}", s.display.theme.code()));
    }
    format!("#{}", parts.join("&"))
}

#[cfg(test)]
mod tests;
