//! The Generate control: asks for up to 64 tokens appended one by one, each chosen by
//! `attnlab_model::sample::Sampling` (greedy, or sampled with an output temperature and
//! top-k / top-p from a seed). The engine runs the generation (`state::GenAsk`, run by
//! `engine::page`), each step shown as it lands, its ids kept exactly, which makes a run the
//! CLI's `attnlab generate` with the same settings. It stops when asked, when the text fills
//! the context (and says so), or when the text or the options change meanwhile. This form
//! holds only its fields as typed; where a run stands is the state's (`GenRun`).

use attnlab_model::sample::Sampling;
use yew::prelude::*;

use super::target_as;
use crate::i18n::{Key, Lang};
use crate::state::{GenRun, GenSettings, GenStatus, GEN_MAX_STEPS};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    /// The model's context length.
    pub context: usize,
    pub settings: GenSettings,
    /// The latest generation, and where it stands (None: none yet).
    pub run: Option<GenRun>,
    pub on_settings: Callback<GenSettings>,
    /// Generate (true) or stop (false).
    pub on_run: Callback<bool>,
}

/// The form's fields as typed.
#[derive(Clone, PartialEq)]
struct Fields {
    steps: String,
    greedy: bool,
    temperature: String,
    top_k: String,
    top_p: String,
    seed: String,
}

impl Fields {
    fn of(s: &GenSettings) -> Fields {
        let opt = |x: Option<String>| x.unwrap_or_default();
        Fields {
            steps: s.steps.to_string(),
            greedy: s.sampling.greedy,
            temperature: s.sampling.temperature.to_string(),
            top_k: opt(s.sampling.top_k.map(|k| k.to_string())),
            top_p: opt(s.sampling.top_p.map(|p| p.to_string())),
            seed: s.sampling.seed.to_string(),
        }
    }

    /// The settings, or what is wrong with each field (every error at once).
    fn parse(&self) -> Result<GenSettings, Vec<Key>> {
        let mut errors = Vec::new();
        let steps = match self.steps.trim().parse::<usize>() {
            Ok(n) if (1..=GEN_MAX_STEPS).contains(&n) => n,
            _ => {
                errors.push(Key::GenBadSteps);
                1
            }
        };
        let temperature = match self.temperature.trim().parse::<f32>() {
            Ok(t) if t.is_finite() && t > 0.0 => t,
            _ if self.greedy => 1.0,
            _ => {
                errors.push(Key::GenBadTemperature);
                1.0
            }
        };
        let top_k = match self.top_k.trim() {
            _ if self.greedy => None,
            "" => None,
            k => match k.parse::<usize>() {
                Ok(k) if k >= 1 => Some(k),
                _ => {
                    errors.push(Key::GenBadTopK);
                    None
                }
            },
        };
        let top_p = match self.top_p.trim() {
            _ if self.greedy => None,
            "" => None,
            p => match p.parse::<f32>() {
                Ok(p) if p.is_finite() && p > 0.0 && p <= 1.0 => Some(p),
                _ => {
                    errors.push(Key::GenBadTopP);
                    None
                }
            },
        };
        let seed = match self.seed.trim().parse::<u64>() {
            Ok(n) => n,
            Err(_) if self.greedy => 0,
            Err(_) => {
                errors.push(Key::GenBadSeed);
                0
            }
        };
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(GenSettings {
            steps,
            sampling: Sampling {
                greedy: self.greedy,
                temperature,
                top_k,
                top_p,
                seed,
            },
        })
    }
}

#[function_component]
pub fn Generate(props: &Props) -> Html {
    let lang = props.lang;
    let fields = use_state(|| Fields::of(&props.settings));
    let status = props
        .run
        .as_ref()
        .map_or(GenStatus::Idle, |r| r.status.clone());
    let parsed = fields.parse();
    let running = matches!(status, GenStatus::Running { .. });
    let toggle = {
        let on_run = props.on_run.clone();
        let ok = parsed.is_ok();
        Callback::from(move |_: MouseEvent| {
            if running || ok {
                on_run.emit(!running);
            }
        })
    };
    // a field edited: kept as typed; valid settings go to the state (and the URL)
    let edit = |set: fn(&mut Fields, String, bool)| {
        let (fields, on_settings) = (fields.clone(), props.on_settings.clone());
        Callback::from(move |e: Event| {
            let Some(i) = target_as::<web_sys::HtmlInputElement>(&e) else {
                return;
            };
            let mut f = (*fields).clone();
            set(&mut f, i.value(), i.checked());
            if let Ok(s) = f.parse() {
                on_settings.emit(s);
            }
            fields.set(f);
        })
    };
    let (state_code, message) = match &status {
        GenStatus::Idle => ("idle", String::new()),
        GenStatus::Running { done, total } => (
            "running",
            Key::GenRunning
                .text(lang)
                .replace("{n}", &done.to_string())
                .replace("{total}", &total.to_string()),
        ),
        GenStatus::Done(n) => (
            "done",
            Key::GenDone.text(lang).replace("{n}", &n.to_string()),
        ),
        GenStatus::Stopped(n) => (
            "stopped",
            Key::GenStopped.text(lang).replace("{n}", &n.to_string()),
        ),
        GenStatus::Context(n) => (
            "context",
            Key::GenContext
                .text(lang)
                .replace("{n}", &n.to_string())
                .replace("{ctx}", &props.context.to_string()),
        ),
        GenStatus::ContextFull => (
            "context",
            Key::GenContextFull
                .text(lang)
                .replace("{ctx}", &props.context.to_string()),
        ),
        GenStatus::Changed(n) => (
            "changed",
            Key::GenTextChanged
                .text(lang)
                .replace("{n}", &n.to_string()),
        ),
    };
    // what the last run appended (for the tests and the curious)
    let ids_attr = props.run.as_ref().map_or_else(String::new, |r| {
        r.appended
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    });
    let f = &*fields;
    // a sampling field: off while greedy (greedy ignores it)
    let text_field = |key: Key,
                      id: &'static str,
                      mode: &'static str,
                      value: &str,
                      onchange: Callback<Event>| {
        html! {
            <label>{ key.text(lang) }
                <input type="text" inputmode={mode} {id} disabled={f.greedy} value={value.to_string()} {onchange} /></label>
        }
    };
    let errors = parsed.as_ref().err().cloned().unwrap_or_default();
    html! {
        <section class="card gen-card" id="generate" aria-labelledby="gen-h">
            <h2 id="gen-h">{ Key::GenTitle.text(lang) }</h2>
            <p class="help">{ Key::GenHelp.text(lang) }</p>
            <div class="gen-fields">
                <label>{ Key::GenSteps.text(lang) }
                    <input type="number" id="gen-steps" min="1" max={GEN_MAX_STEPS.to_string()} step="1"
                        value={f.steps.clone()} onchange={edit(|f, v, _| f.steps = v)} /></label>
                <label class="check"><input type="checkbox" id="gen-greedy" checked={f.greedy}
                    onchange={edit(|f, _, c| f.greedy = c)} />{ Key::GenGreedy.text(lang) }</label>
                { text_field(Key::GenTemperature, "gen-temperature", "decimal", &f.temperature, edit(|f, v, _| f.temperature = v)) }
                { text_field(Key::GenTopK, "gen-top-k", "numeric", &f.top_k, edit(|f, v, _| f.top_k = v)) }
                { text_field(Key::GenTopP, "gen-top-p", "decimal", &f.top_p, edit(|f, v, _| f.top_p = v)) }
                { text_field(Key::GenSeed, "gen-seed", "numeric", &f.seed, edit(|f, v, _| f.seed = v)) }
            </div>
            if !errors.is_empty() {
                <ul class="error gen-errors" role="alert" id="gen-errors">
                    { for errors.iter().map(|k| html! { <li>{ k.text(lang) }</li> }) }
                </ul>
            }
            <div class="gen-actions">
                // one button that turns into Stop while running, so the keyboard focus stays
                <button type="button" id={if running { "gen-stop" } else { "gen-start" }}
                    class={classes!(running.then_some("stop"))}
                    disabled={!running && parsed.is_err()} onclick={toggle}>
                    { if running { Key::GenStop } else { Key::GenStart }.text(lang) }</button>
                <output id="gen-status" role="status" data-state={state_code} data-ids={ids_attr}>{ message }</output>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests;
