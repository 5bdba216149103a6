//! The page's status lines: the model loading (with its progress), URL parameters that were
//! ignored, the notice of a lost GPU or a restarted worker, and why the CPU computes.

use yew::prelude::*;

use crate::engine::{Backend, CpuWhy};
use crate::i18n::{Key, Lang};
use crate::state::{Load, ModelStatus, Notice, Shown};

/// The model's loading: progress while it is fetched, the error if it failed.
pub fn load_status(model: &ModelStatus, lang: Lang) -> Html {
    let t = |k: Key| k.text(lang);
    match &model.load {
        Load::Fetching { loaded, total } => {
            let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
            let text = match total {
                Some(t) => format!("{} — {} / {}", Key::Loading.text(lang), mb(*loaded), mb(*t)),
                None => format!("{} — {}", Key::Loading.text(lang), mb(*loaded)),
            };
            html! {
                <div class="loading" role="status">
                    <label for="load-progress">{ text }</label>
                    if let Some(total) = total {
                        <progress id="load-progress" max={total.to_string()} value={loaded.to_string()} />
                    } else {
                        <progress id="load-progress" />
                    }
                </div>
            }
        }
        Load::Failed(e) => html! {
            <div class="error" role="alert">{ format!("{}: {e}", t(Key::LoadFailed)) }</div>
        },
        Load::Ready => html! {},
    }
}

/// The URL parameters that were ignored, if any.
pub fn url_notice(model: &ModelStatus, lang: Lang) -> Option<Html> {
    let t = |k: Key| k.text(lang);
    (!model.url_notices.is_empty()).then(|| {
        html! {
            <div class="notice" role="status" id="url-notice">
                { format!("{}: {}", t(Key::UrlIgnored), model.url_notices.join(" · ")) }
            </div>
        }
    })
}

/// A lost GPU or a restarted CPU worker, until the next notice.
pub fn notice(model: &ModelStatus, lang: Lang) -> Option<Html> {
    let t = |k: Key| k.text(lang);
    model.notice.as_ref().map(|n| {
        let (key, why, id) = match n {
            Notice::GpuFailed(e) => (Key::GpuFailed, e, "notice"),
            Notice::WorkerRestarted(e) => (Key::WorkerRestarted, e, "worker-notice"),
        };
        html! { <div class="notice" role="alert" id={id}>{ format!("{} — {why}", t(key)) }</div> }
    })
}

/// Why the CPU computes: the browser has no WebGPU, or this one result ran on the CPU.
pub fn cpu_reason(model: &ModelStatus, shown: Option<&Shown>, lang: Lang) -> Option<Html> {
    let t = |k: Key| k.text(lang);
    match (&model.backend, shown.and_then(|s| s.cpu_because.as_ref())) {
        (
            Backend::Cpu {
                why: CpuWhy::NoWebGpu(reason),
            },
            _,
        ) => Some(html! {
            <p class="help cpu-reason">{ format!("{} ({reason})", t(Key::CpuBecause)) }</p>
        }),
        (
            Backend::Cpu {
                why: CpuWhy::CpuOnlyModel(why),
            },
            _,
        ) => Some(html! {
            <p class="help cpu-reason" id="cpu-only-model">{ format!("{} ({why})", t(Key::CpuOnlyModel)) }</p>
        }),
        (
            Backend::Cpu {
                why: CpuWhy::SoftwareGpuSlow,
            },
            _,
        ) => Some(html! {
            <p class="help cpu-reason" id="cpu-software-slow">{ t(Key::SoftwareGpuSlow) }</p>
        }),
        (Backend::Gpu { .. }, Some(why)) => Some(html! {
            <p class="help cpu-reason" id="cpu-this-time">{ format!("{} ({why})", t(Key::CpuThisTime)) }</p>
        }),
        _ => None,
    }
}
