use super::*;
use crate::engine::{CpuWhy, Reply};
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
        engine: 1,
        asked: Rc::new(State::new(Lang::Ko).request()),
        text: format!("text {generation}"),
        tokens: Rc::new(vec![]),
        roles: Rc::new(attnlab_model::roles::text_scores(&trace)),
        b: None,
        run: Reply {
            trace: Rc::new(trace),
            baseline: None,
            incremental: false,
            forward_ms: 1.0,
            engine_ms: None,
            complete: true,
            ran_on_gpu: false,
            backend: Backend::Cpu {
                why: CpuWhy::Chosen,
            },
            notes: vec![],
        },
        cpu_because: None,
        input_at: 0.0,
        result_at: 0.0,
        generated: None,
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
    assert_eq!(
        s.view.text, LESSON_SENTENCE,
        "the text is what was asked, not a result's"
    );
    let s = reduce(s, Action::Result(shown(6, &[1])));
    assert_eq!(s.results.shown.as_ref().unwrap().generation, 6);
}

#[test]
fn a_result_brings_its_backend_and_notices_in_one_action() {
    let s = Rc::new(State::new(Lang::Ko));
    let mut r = shown(1, &[1, 2]);
    r.run.notes = vec![Note::GpuFailed("lost".into())];
    r.run.backend = Backend::Cpu {
        why: CpuWhy::GpuFailed("lost".into()),
    };
    let s = reduce(s, Action::Result(r));
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
        arch: Arch::Gpt2 {
            config: config(),
            has_ln_f: false,
        },
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
    assert_eq!(s.results.shown.as_ref().unwrap().run.trace.dropped, 2);
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

#[test]
fn the_request_is_the_states_and_a_result_that_answers_it_asks_nothing_more() {
    let s = Rc::new(State::new(Lang::Ko));
    let first = s.request();
    assert_eq!(first.text, LESSON_SENTENCE);
    assert_eq!(plan(&first, None), Plan::Run, "nothing on screen");
    // the same text typed again (an input event that changed nothing): no new state
    let same = reduce(
        s.clone(),
        Action::View(ViewAction::Type(LESSON_SENTENCE.into(), 5.0)),
    );
    assert!(Rc::ptr_eq(&s, &same));
    let s = reduce(s, Action::View(ViewAction::Type("나는 어제".into(), 7.0)));
    let typed = s.request();
    assert_eq!(
        (typed.text.as_str(), s.view.input_at),
        ("나는 어제", Some(7.0))
    );
    assert_eq!(plan(&typed, Some(&first)), Plan::Run);
    // deleted back to the text on screen: its result answers it
    let s = reduce(
        s,
        Action::View(ViewAction::Type(LESSON_SENTENCE.into(), 9.0)),
    );
    assert_eq!(plan(&s.request(), Some(&first)), Plan::Withdraw);
    // the options, the backend and the second text are asked too
    let tau = reduce(
        s.clone(),
        Action::Intervene(InterventionAction::SetApply(true)),
    );
    let tau = reduce(
        tau,
        Action::Intervene(InterventionAction::SetVariant(Variant::Unscaled)),
    );
    assert!(!tau.request().opts.scale);
    assert_eq!(tau.view.input_at, None, "timed when it runs");
    assert_eq!(plan(&tau.request(), Some(&first)), Plan::Run);
    let cpu = reduce(
        s.clone(),
        Action::Model(ModelAction::SetPreference(Preference::Cpu)),
    );
    assert_eq!(plan(&cpu.request(), Some(&first)), Plan::Run);
    let b = reduce(s.clone(), Action::View(ViewAction::ToggleCompare(true)));
    assert_eq!(
        b.request().compare.as_deref(),
        Some("나는 어제 산 차를 오늘 마셨다")
    );
    let b = reduce(b, Action::View(ViewAction::ToggleCompare(false)));
    assert_eq!(b.request().compare, None);
    let b = reduce(b, Action::View(ViewAction::ToggleCompare(true)));
    assert_eq!(
        b.request().compare.as_deref(),
        Some("나는 어제 산 차를 오늘 마셨다"),
        "the last B again"
    );
}

/// A generation's step `done` of `nonce`, appending `ids` to `base`.
fn step(
    generation: u64,
    nonce: u64,
    base: &str,
    ids: &[u32],
    done: usize,
    end: Option<GenEnd>,
) -> Shown {
    let mut r = shown(generation, &[1, 2]);
    r.text = format!("{base}+{}", ids.len());
    r.generated = Some(Rc::new(Generated {
        nonce,
        base: base.into(),
        ids: ids.to_vec(),
        done,
        end,
    }));
    r
}

#[test]
fn a_generation_is_asked_once_and_its_steps_move_it_on() {
    let s = Rc::new(State::new(Lang::Ko));
    let s = reduce(
        s,
        Action::View(ViewAction::SetGen(GenSettings {
            steps: 3,
            ..GenSettings::default()
        })),
    );
    let s = reduce(s, Action::View(ViewAction::GenStart));
    let asked = s.request();
    let ask = asked.generate.clone().expect("a generation is asked");
    assert_eq!((ask.nonce, ask.steps), (1, 3));
    assert_eq!(plan(&asked, None), Plan::Generate);
    let status = |s: &State| s.view.gen_run.as_ref().unwrap().status.clone();
    assert_eq!(status(&s), GenStatus::Running { done: 1, total: 3 });
    // a step lands: the text box shows it, the request stays what was asked
    let s = reduce(
        s,
        Action::Result(step(2, 1, LESSON_SENTENCE, &[40], 1, None)),
    );
    assert_eq!(status(&s), GenStatus::Running { done: 2, total: 3 });
    assert_eq!(s.view.text, format!("{LESSON_SENTENCE}+1"));
    assert_eq!(s.request(), asked, "no new request per step");
    let s = reduce(
        s,
        Action::Result(step(3, 1, LESSON_SENTENCE, &[40, 41], 2, None)),
    );
    let last = step(4, 1, LESSON_SENTENCE, &[40, 41, 42], 3, Some(GenEnd::Done));
    let last_asked = Request {
        appended: Rc::new(vec![40, 41, 42]),
        ..asked.clone()
    };
    let s = reduce(s, Action::Result(last));
    assert_eq!(status(&s), GenStatus::Done(3));
    assert_eq!(s.view.gen_run.as_ref().unwrap().appended, [40, 41, 42]);
    // ended: the request is the text with exactly the generated ids, which the last step answers
    let after = s.request();
    assert_eq!(
        (after.text.as_str(), &after.appended[..], &after.generate),
        (LESSON_SENTENCE, &[40, 41, 42][..], &None)
    );
    assert_eq!(plan(&after, Some(&last_asked)), Plan::Withdraw);
    // a second run continues from exactly those ids
    let s = reduce(s, Action::View(ViewAction::GenStart));
    let again = s.request();
    assert_eq!(
        (again.generate.as_ref().unwrap().nonce, &again.appended[..]),
        (2, &[40, 41, 42][..])
    );
    // stopped after one step: nothing more runs, and a late step is not shown
    let s = reduce(
        s,
        Action::Result(step(5, 2, LESSON_SENTENCE, &[40, 41, 42, 43], 1, None)),
    );
    let s = reduce(s, Action::View(ViewAction::GenStop));
    assert_eq!(status(&s), GenStatus::Stopped(1));
    let shown_asked = Request {
        appended: Rc::new(vec![40, 41, 42, 43]),
        ..again.clone()
    };
    assert_eq!(plan(&s.request(), Some(&shown_asked)), Plan::Withdraw);
    let late = reduce(
        s.clone(),
        Action::Result(step(6, 2, LESSON_SENTENCE, &[40, 41, 42, 43, 44], 2, None)),
    );
    assert_eq!(late.results.shown.as_ref().unwrap().generation, 5);
    // typing while a run goes: it ends as changed, and the typed text is asked
    let s = reduce(s, Action::View(ViewAction::GenStart));
    let s = reduce(s, Action::View(ViewAction::Type("나는".into(), 1.0)));
    assert_eq!(status(&s), GenStatus::Changed(0));
    assert_eq!(
        (
            s.request().text.as_str(),
            s.request().appended.len(),
            s.request().generate
        ),
        ("나는", 0, None)
    );
    // a text that fills the context appends nothing
    let s = reduce(s, Action::View(ViewAction::GenStart));
    let s = reduce(s, Action::ContextFull(4));
    assert_eq!(status(&s), GenStatus::ContextFull);
}

#[test]
fn a_query_head_reads_its_groups_key_value_head() {
    let a = LlamaAttn {
        inv_freq: Rc::new(vec![1.0]),
        pairs: attnlab_model::llama::RopePairs::Adjacent,
        n_head: 9,
        n_kv_head: 3,
    };
    assert_eq!(a.kv_of(0), (0, 0..3));
    assert_eq!(a.kv_of(6), (2, 6..9));
    assert_eq!(a.kv_of(5), (1, 3..6));
    // multi-query: every head reads the one key/value head
    let mqa = LlamaAttn { n_kv_head: 1, ..a };
    assert_eq!(mqa.kv_of(8), (0, 0..9));
}
