use super::*;
use crate::engine::CpuWhy;
use attnlab_model::testing::{random_model, tiny_config};
use attnlab_model::{forward, Config, LnPlacement, TokenInfo};

fn config() -> Config {
    tiny_config(LnPlacement::Post)
}

fn shown(generation: u64, tokens: &[u32]) -> Shown {
    let model = random_model(&config(), 1, 0.5);
    let trace = forward(&model, tokens, &AttentionOptions::default()).unwrap();
    Shown {
        generation,
        text: format!("text {generation}"),
        tokens: Rc::new(vec![]),
        roles: Rc::new(attnlab_model::roles::text_scores(&trace)),
        b: None,
        trace: Rc::new(trace),
        baseline: None,
        cpu_because: None,
        forward_ms: 1.0,
        engine_ms: None,
        incremental: false,
        ran_on_gpu: false,
        backend: Backend::Cpu {
            why: CpuWhy::Chosen,
        },
        notes: vec![],
        input_at: 0.0,
        result_at: 0.0,
        generated: None,
        complete: true,
    }
}

fn reduce(s: Rc<State>, a: Action) -> Rc<State> {
    s.reduce(a)
}

#[test]
fn an_older_result_never_replaces_a_newer_one() {
    let s = Rc::new(State::new(Lang::Ko));
    let s = reduce(s, Action::Result(shown(5, &[1, 2, 3])));
    let s = reduce(s, Action::Result(shown(4, &[1, 2])));
    assert_eq!(s.results.shown.as_ref().unwrap().generation, 5);
    assert_eq!(s.view.text, "text 5");
    let s = reduce(s, Action::Result(shown(6, &[1])));
    assert_eq!(s.results.shown.as_ref().unwrap().generation, 6);
}

#[test]
fn a_result_brings_its_text_backend_and_notices_in_one_action() {
    let s = Rc::new(State::new(Lang::Ko));
    let mut r = shown(1, &[1, 2]);
    r.notes = vec![Note::GpuFailed("lost".into())];
    r.backend = Backend::Cpu {
        why: CpuWhy::GpuFailed("lost".into()),
    };
    let s = reduce(s, Action::Result(r));
    assert_eq!(s.view.text, "text 1");
    assert_eq!(s.model.notice, Some(Notice::GpuFailed("lost".into())));
    assert!(matches!(s.model.backend, Backend::Cpu { .. }));
}

#[test]
fn options_follow_the_applied_variant_only_when_applied() {
    let mut s = State::new(Lang::En);
    s.interventions.variant = Variant::Temperature;
    s.interventions.tau = 0.5;
    assert_eq!(s.options(), AttentionOptions::default());
    s.interventions.apply = true;
    assert_eq!(s.options().temperature, 0.5);
    s.interventions.variant = Variant::Unscaled;
    assert!(!s.options().scale && s.options().temperature == 1.0);
    s.interventions.mask = false;
    assert!(!s.options().causal_mask);
}

#[test]
fn selections_stay_inside_the_model_and_the_text() {
    let s = Rc::new(State::new(Lang::Ko));
    let info = ModelInfo {
        config: config(),
        has_ln_f: false,
        n_params: 0,
    };
    let s = reduce(s, Action::Model(ModelAction::Loaded(info)));
    let s = reduce(s, Action::View(ViewAction::SelectHead(9, 9)));
    assert_eq!((s.view.layer, s.view.head), (1, 1));
    let s = reduce(s, Action::View(ViewAction::SelectQuery(7)));
    let s = reduce(s, Action::View(ViewAction::FocusCell(Some((4, 2)))));
    let s = reduce(s, Action::Result(shown(1, &[1, 2, 3])));
    assert_eq!(
        s.query_index(),
        Some(2),
        "a query past the end falls back to the last"
    );
    assert_eq!(s.view.cell, None, "a focused cell past the end is dropped");
    let s = reduce(s, Action::Intervene(InterventionAction::SetTau(f32::NAN)));
    assert_eq!(s.interventions.tau, 1.0);
    let s = reduce(s, Action::Intervene(InterventionAction::SetTau(100.0)));
    assert_eq!(s.interventions.tau, TAU_MAX);
}

fn shown_text(generation: u64, text: &str, spans: &[(usize, usize)]) -> Shown {
    let mut s = shown(generation, &vec![1; spans.len()]);
    s.text = text.into();
    s.tokens = Rc::new(
        spans
            .iter()
            .map(|&span| TokenInfo {
                id: 1,
                piece: String::new(),
                display: String::new(),
                span,
                partial: false,
            })
            .collect(),
    );
    s
}

#[test]
fn a_pin_follows_its_token_while_the_text_before_it_is_unchanged() {
    let s = Rc::new(State::new(Lang::Ko));
    // "나는 커피를 마셨다": tokens 나는 | ␣커피를 | ␣마셨다
    let s = reduce(
        s,
        Action::Result(shown_text(
            1,
            "나는 커피를 마셨다",
            &[(0, 2), (2, 6), (6, 10)],
        )),
    );
    let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
    assert_eq!(
        s.view.pin.as_ref().map(|p| p.before.as_str()),
        Some("나는 커피를")
    );
    assert_eq!(s.query_index(), Some(1));
    // typing after it: the pin stays on the same token
    let s = reduce(
        s,
        Action::Result(shown_text(
            2,
            "나는 커피를 마셨다 오늘",
            &[(0, 2), (2, 6), (6, 10), (10, 13)],
        )),
    );
    assert_eq!(s.query_index(), Some(1));
    assert!(s.view.pin.is_some());
    // a second click on the same row unpins; pin again
    let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
    assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(3)));
    let s = reduce(s, Action::View(ViewAction::Pin(Some(1))));
    // the text before the pin changes: the pin goes, the query is the last token again
    let s = reduce(
        s,
        Action::Result(shown_text(3, "나는 차를 마셨다", &[(0, 2), (2, 5), (5, 9)])),
    );
    assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(2)));
    // Esc (None) unpins too
    let s = reduce(s, Action::View(ViewAction::Pin(Some(0))));
    assert!(s.view.pin.is_some());
    let s = reduce(s, Action::View(ViewAction::Pin(None)));
    assert_eq!(s.view.pin, None);
}

#[test]
fn a_pin_counts_dropped_tokens_and_lets_go_when_its_token_is_dropped() {
    // the tiny model's context is 8: 10 tokens run the last 8 (2 dropped)
    let spans = |n: usize| (0..n).map(|i| (i, i + 1)).collect::<Vec<_>>();
    let text = |n: usize| "가".repeat(n);
    let s = Rc::new(State::new(Lang::Ko));
    let s = reduce(s, Action::Result(shown_text(1, &text(10), &spans(10))));
    assert_eq!(s.results.shown.as_ref().unwrap().trace.dropped, 2);
    let s = reduce(s, Action::View(ViewAction::Pin(Some(1)))); // row 1 = token 3
    assert_eq!(s.view.pin.as_ref().map(|p| p.token), Some(3));
    // one more token: one more dropped, the same token is one row up
    let s = reduce(s, Action::Result(shown_text(2, &text(11), &spans(11))));
    assert_eq!(
        (s.view.pin.as_ref().map(|p| p.token), s.query_index()),
        (Some(3), Some(0))
    );
    // another: the pinned token is dropped, and the pin goes
    let s = reduce(s, Action::Result(shown_text(3, &text(12), &spans(12))));
    assert_eq!((s.view.pin.clone(), s.query_index()), (None, Some(7)));
    // a row that is not there changes nothing
    let same = reduce(s.clone(), Action::View(ViewAction::Pin(Some(99))));
    assert!(Rc::ptr_eq(&s, &same));
}

#[test]
fn an_action_that_changes_nothing_returns_the_same_state() {
    let s = Rc::new(State::new(Lang::Ko));
    let same = reduce(s.clone(), Action::View(ViewAction::FocusCell(None)));
    assert!(Rc::ptr_eq(&s, &same), "no new state, so no render");
    let other = reduce(s.clone(), Action::View(ViewAction::FocusCell(Some((0, 0)))));
    assert!(!Rc::ptr_eq(&s, &other));
}
