//! Choose the model: the bundled one, a real model served beside the app (SmolLM2), or your
//! own — drop or pick a `.gguf` file, or config.json + model.safetensors + tokenizer.json (or
//! a folder holding them). The app reads them with progress, checks the model and only then
//! replaces the current one; on any error the current model stays and the error says what
//! is wrong.

use web_sys::{DragEvent, Event, File, HtmlInputElement};
use yew::prelude::*;

use super::target_as;
use crate::dom;
use crate::i18n::{Key, Lang};
use crate::kept::KeptInfo;
use crate::loader::{OwnLoad, SERVED};
use crate::state::ModelSource;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub lang: Lang,
    pub own: OwnLoad,
    /// The files given, and whether to keep them on this device.
    pub on_files: Callback<(Vec<File>, bool)>,
    /// The model kept on this device, if any (or why keeping failed), and its buttons.
    pub kept: Option<Result<KeptInfo, String>>,
    pub on_load_kept: Callback<()>,
    pub on_forget: Callback<()>,
    /// The model running, and the menu's choice (a served model's id, or None for the
    /// bundled one) with whether to keep it on this device.
    pub source: ModelSource,
    pub on_model: Callback<(Option<&'static str>, bool)>,
    /// Opens a Hugging Face model id (from `hub`, the Hub's address), keeping it or not.
    pub hub: String,
    pub on_hub: Callback<(String, bool)>,
}

#[function_component]
pub fn ModelLoader(props: &Props) -> Html {
    let lang = props.lang;
    let t = |k: Key| k.text(lang);
    let over = use_state(|| false);
    // "keep the model I open next on this device": off unless the user asks
    let keep = use_state(|| false);
    let on_files = {
        let (cb, keep) = (props.on_files.clone(), *keep);
        Callback::from(move |files: Vec<File>| cb.emit((files, keep)))
    };
    let on_input = {
        let cb = on_files.clone();
        Callback::from(move |e: Event| {
            if let Some(input) = target_as::<HtmlInputElement>(&e) {
                let picked = dom::file_list(input.files());
                input.set_value(""); // picking the same files again fires again
                if !picked.is_empty() {
                    cb.emit(picked);
                }
            }
        })
    };
    // one model at a time: while one is read or checked, drops are refused
    let busy = matches!(
        props.own,
        OwnLoad::Fetching { .. }
            | OwnLoad::Reading { .. }
            | OwnLoad::Checking { .. }
            | OwnLoad::Keeping
    );
    let on_drop = {
        let (cb, over) = (on_files.clone(), over.clone());
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            over.set(false);
            if busy {
                return;
            }
            let Some(dt) = e.data_transfer() else { return };
            match dom::dropped(&dt) {
                dom::Dropped::Files(f) => {
                    if !f.is_empty() {
                        cb.emit(f);
                    }
                }
                // a folder (or files as entries): read what it holds, then load
                dom::Dropped::Entries(entries) => {
                    let cb = cb.clone();
                    wasm_bindgen_futures::spawn_local(async move {
                        // an unreadable folder shows as "missing files"
                        cb.emit(dom::entry_files(entries).await.unwrap_or_default());
                    });
                }
            }
        })
    };
    let on_over = {
        let over = over.clone();
        Callback::from(move |e: DragEvent| {
            e.prevent_default();
            over.set(true);
        })
    };
    let on_leave = {
        let over = over.clone();
        Callback::from(move |_: DragEvent| over.set(false))
    };
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    let status = match &props.own {
        OwnLoad::Idle => html! {},
        OwnLoad::Fetching { loaded, total } => html! {
            <div class="loading" role="status" id="own-status" data-state="fetching">
                <label for="own-progress">{ format!("{} — {} / {}", t(Key::Downloading), mb(*loaded), mb(*total)) }</label>
                <progress id="own-progress" max={(*total).max(1).to_string()} value={loaded.to_string()} />
            </div>
        },
        OwnLoad::Reading { loaded, total } => html! {
            <div class="loading" role="status" id="own-status">
                <label for="own-progress">{ format!("{} — {} / {}", t(Key::Reading), mb(*loaded), mb(*total)) }</label>
                <progress id="own-progress" max={total.to_string()} value={loaded.to_string()} />
            </div>
        },
        OwnLoad::Keeping => html! {
            <div class="loading" role="status" id="own-status" data-state="keeping">
                <label for="own-progress">{ format!("{}…", t(Key::Keeping)) }</label>
                <progress id="own-progress" />
            </div>
        },
        OwnLoad::Checking { done, total } => html! {
            <div class="loading" role="status" id="own-status">
                <label for="own-progress">{ format!("{}… {done} / {total}", t(Key::Checking)) }</label>
                <progress id="own-progress" max={(*total).max(1).to_string()} value={done.to_string()} />
            </div>
        },
        OwnLoad::Missing { missing, got } => html! {
            <p class="error" role="alert" id="own-status" data-state="failed">
                { format!("{}: {} — {}: {}", t(Key::MissingFiles), missing.join(", "), t(Key::FilesGiven),
                    if got.is_empty() { "—".to_string() } else { got.join(", ") }) }
            </p>
        },
        OwnLoad::Failed(e) => html! {
            <p class="error" role="alert" id="own-status" data-state="failed">{ format!("{}: {e}", t(Key::OwnModelFailed)) }</p>
        },
        OwnLoad::Loaded(name) => html! {
            <p class="help ok" role="status" id="own-status" data-state="loaded">{ format!("{}: {name}", t(Key::OwnModelLoaded)) }</p>
        },
    };
    let kept = match &props.kept {
        None => html! {},
        Some(Ok(k)) => html! {
            <div class="kept" id="kept" role="status">
                <span>{ format!("{}: {} ({})", t(Key::KeptModel), k.name, crate::kept::size(k.bytes)) }</span>
                <button id="kept-load" disabled={busy} onclick={{
                    let cb = props.on_load_kept.clone();
                    Callback::from(move |_| cb.emit(()))
                }}>{ t(Key::LoadKept) }</button>
                <button id="kept-forget" disabled={busy} onclick={{
                    let cb = props.on_forget.clone();
                    Callback::from(move |_| cb.emit(()))
                }}>{ t(Key::ForgetKept) }</button>
            </div>
        },
        Some(Err(e)) => html! {
            <p class="error" role="alert" id="kept">{ format!("{}: {e}", t(Key::KeepFailed)) }</p>
        },
    };
    // the menu: the bundled model and the served ones, the running one pressed
    let choice = |id: Option<&'static str>, label: String| {
        let pressed = match (&props.source, id) {
            (ModelSource::Bundled, None) => true,
            (ModelSource::Served(s), Some(i)) => *s == i,
            _ => false,
        };
        let (cb, keep) = (props.on_model.clone(), *keep);
        html! {
            <button class="model-choice" data-model={id.unwrap_or("bundled")} aria-pressed={pressed.to_string()}
                disabled={busy} onclick={Callback::from(move |_| cb.emit((id, keep && id.is_some())))}>{ label }</button>
        }
    };
    let hub_id = use_state(String::new);
    let on_hub_submit = {
        let (cb, id, keep) = (props.on_hub.clone(), hub_id.clone(), *keep);
        Callback::from(move |e: SubmitEvent| {
            e.prevent_default();
            if !id.trim().is_empty() {
                cb.emit(((*id).clone(), keep));
            }
        })
    };
    let on_hub_input = {
        let id = hub_id.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(input) = target_as::<HtmlInputElement>(&e) {
                id.set(input.value());
            }
        })
    };
    html! {
        <section class="card own-card" aria-labelledby="own-h">
            <h2 id="own-h">{ t(Key::OwnModel) }</h2>
            <label class="check keep-check">
                <input type="checkbox" id="keep-model" checked={*keep} onchange={{
                    let keep = keep.clone();
                    super::on_checked(&Callback::from(move |on: bool| keep.set(on)))
                }} />
                { t(Key::KeepModel) }
            </label>
            <div class="model-menu" id="model-menu" role="group" aria-label={t(Key::ModelMenu)}>
                { choice(None, t(Key::TeachingModel).to_string()) }
                { for SERVED.iter().map(|s| choice(Some(s.id), s.label.to_string())) }
            </div>
            <form class="hub-form" id="hub-form" onsubmit={on_hub_submit}>
                <label for="hub-id">{ t(Key::HubId) }</label>
                <input id="hub-id" type="text" spellcheck="false" autocomplete="off"
                    placeholder="HuggingFaceTB/SmolLM2-135M-Instruct" value={(*hub_id).clone()}
                    oninput={on_hub_input} disabled={busy} />
                <button type="submit" id="hub-open" disabled={busy}>{ t(Key::HubOpen) }</button>
                <span class="help">{ format!("{} {}", t(Key::HubFrom), props.hub) }</span>
            </form>
            <p class="help">{ t(Key::OwnModelHelp) }</p>
            <div class={classes!("drop-zone", (*over).then_some("over"))} id="drop-zone"
                ondrop={on_drop} ondragover={on_over} ondragleave={on_leave}>
                <span>{ t(Key::DropHere) }</span>
                <label class="file-button">
                    { t(Key::PickFiles) }
                    <input type="file" id="own-files" multiple=true accept=".json,.safetensors,.gguf"
                        disabled={busy} onchange={on_input.clone()} />
                </label>
                <label class="file-button">
                    { t(Key::PickFolder) }
                    <input type="file" id="own-folder" webkitdirectory=true disabled={busy} onchange={on_input} />
                </label>
            </div>
            { status }
            { kept }
        </section>
    }
}
