use super::*;
use crate::state::ModelSource;

#[test]
fn a_state_survives_the_round_trip_exactly() {
    let mut s = State::new(Lang::En);
    s.view.text = "나는 <b>커피</b> & 차 100% 🙂\n둘째 줄 a+b=c#x".into();
    s.lang = Lang::Ko;
    s.view.layer = 3;
    s.view.head = 1;
    s.view.query = Some(4);
    s.interventions.variant = Variant::Temperature;
    s.interventions.tau = 0.35;
    s.interventions.apply = true;
    s.interventions.mask = false;
    s.interventions.ablate = [(0, 1), (2, 3)].into();
    s.model.preference = Preference::Cpu;
    s.view.lesson = Some(3);
    s.view.compare = Some("나는 차를 & 물을 마셨다".into());
    s.view.compare_last = "나는 차를 & 물을 마셨다".into();
    s.view.auto_head = false; // a link names its head: the page does not pick one
    s.view.flow = attnlab_model::flow::Method::Rollout;
    assert!(fragment(&s).ends_with("&lesson=4&flow=rollout&backend=cpu"));
    s.view.gen.steps = 12;
    s.view.gen.sampling.temperature = 0.7;
    s.view.gen.sampling.top_p = Some(0.9);
    s.view.gen.sampling.seed = 2026;
    assert!(fragment(&s).ends_with("&gen=12&greedy=0&out_t=0.7&top_k=&top_p=0.9&seed=2026"));
    s.display.theme = crate::display::Theme::Dark;
    s.display.embed = Some(crate::display::Solo::Lesson(3));
    s.display.input = false;
    assert!(fragment(&s).ends_with("&seed=2026&theme=dark&embed=lesson-4&input=0"));
    let (u, notices) = parse(&fragment(&s));
    assert_eq!(notices, Vec::<String>::new());
    let mut back = State::new(Lang::En);
    u.apply_to(&mut back);
    assert_eq!(back, s);
    // the full page's link: the same state, neither embedded nor without its text box
    let (u, _) = parse(&page_fragment(&s));
    let mut full = State::new(Lang::En);
    u.apply_to(&mut full);
    assert_eq!((full.display.embed, full.display.input), (None, true));
    assert_eq!(
        (full.view, full.display.theme),
        (s.view.clone(), s.display.theme)
    );
}

#[test]
fn unknown_and_malformed_parameters_are_ignored_with_a_notice() {
    let (u, notices) = parse(
        "#t=hi&lang=fr&l=x&h=2&tau=1e9&v=<script>&apply=maybe&ablate=1.x&zzz=1&q=-3&mask=0&lesson=10&backend=gpu&gen=65&out_t=NaN&top_k=0&top_p=1.5&seed=-1&greedy=2&theme=neon&embed=lesson-10&input=maybe",
    );
    assert_eq!(u.text.as_deref(), Some("hi"));
    assert_eq!(u.head, Some(2));
    assert_eq!(u.mask, Some(false));
    assert_eq!(
        (u.lang, u.layer, u.tau, u.variant, u.apply, u.ablate, u.query),
        (None, None, None, None, None, None, None)
    );
    assert_eq!(u.lesson, None, "there are 9 sections");
    assert_eq!(u.backend, None, "auto, webgpu or cpu");
    assert_eq!(
        (
            u.gen_steps,
            u.gen_temperature,
            u.gen_top_k,
            u.gen_top_p,
            u.gen_seed,
            u.gen_greedy
        ),
        (None, None, None, None, None, None),
        "every bad generation setting is skipped"
    );
    assert_eq!((u.theme, u.embed, u.input), (None, None, None));
    assert_eq!(notices.len(), 19, "{notices:?}");
    assert!(notices.iter().any(|n| n.contains("zzz")));
    assert!(
        notices.iter().any(|n| n.contains("<script>")),
        "shown as text, not run"
    );
}

#[test]
fn decoding_is_forgiving() {
    assert_eq!(percent_decode("a%20b+c"), "a b c");
    assert_eq!(percent_decode("%ED%95%9C"), "한");
    assert_eq!(percent_decode("100%"), "100%");
    assert_eq!(percent_decode("%zz%4"), "%zz%4");
    assert_eq!(percent_decode("%FF"), "\u{fffd}");
    assert_eq!(parse("").0, UrlState::default());
    assert_eq!(parse("#&&=&").1.len(), 1);
    let long = format!("t={}", "가".repeat(MAX_TEXT + 5));
    let (u, n) = parse(&long);
    assert_eq!(u.text.unwrap().chars().count(), MAX_TEXT);
    assert_eq!(n.len(), 1);
}

#[test]
fn a_served_model_is_in_the_link_from_the_moment_it_is_asked_for() {
    let (st, notices) = parse("#t=hi&model=smollm2");
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(st.model, Some(ModelSource::Served("smollm2")));
    let mut s = State::new(Lang::En);
    st.apply_to(&mut s);
    assert_eq!(s.model.asked, Some(ModelSource::Served("smollm2")));
    // asked, still loading: the link keeps it
    assert!(fragment(&s).contains("&model=smollm2"));
    // loaded: the source says it
    s.model.asked = None;
    s.model.source = crate::state::ModelSource::Served("smollm2");
    assert!(fragment(&s).contains("&model=smollm2"));
    // the user's own files are not a link
    s.model.source = crate::state::ModelSource::Own("a.gguf".into());
    assert!(!fragment(&s).contains("model="));
    // an unknown model is skipped with a notice
    let (st, notices) = parse("#model=gpt-5");
    assert_eq!(st.model, None);
    assert_eq!(notices.len(), 1);
}

#[test]
fn a_hugging_face_id_and_its_hub_round_trip_and_bad_ones_are_skipped() {
    let (st, notices) = parse("#model=hf%3AHuggingFaceTB%2FSmolLM2-135M-Instruct&hub=.%2Fhub");
    assert!(notices.is_empty(), "{notices:?}");
    let mut s = State::new(Lang::En);
    st.apply_to(&mut s);
    assert_eq!(
        s.model.asked,
        Some(ModelSource::Hub(
            "HuggingFaceTB/SmolLM2-135M-Instruct".into()
        ))
    );
    assert_eq!(s.model.hub_base(), "./hub");
    let (again, _) = parse(&fragment(&s));
    assert_eq!((again.model, again.hub), (st.model, st.hub));
    // not ids, not addresses: skipped with a notice each
    for bad in [
        "#model=hf%3Anoslash",
        "#model=hf%3A..%2Fx",
        "#model=hf%3Aa%2Fb%2Fc",
        "#hub=javascript%3Aalert(1)",
        "#hub=http%3A%2F%2Fexample.com",
    ] {
        let (st, notices) = parse(bad);
        assert!(st.model.is_none() && st.hub.is_none(), "{bad}");
        assert_eq!(notices.len(), 1, "{bad}");
    }
    assert_eq!(
        State::new(Lang::En).model.hub_base(),
        "https://huggingface.co"
    );
}
