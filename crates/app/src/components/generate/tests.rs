use super::*;

fn fields() -> Fields {
    Fields::of(&GenSettings::default())
}

#[test]
fn the_form_round_trips_and_names_every_bad_field() {
    assert_eq!(fields().parse().unwrap(), GenSettings::default());
    let bad = Fields {
        steps: "65".into(),
        temperature: "NaN".into(),
        top_k: "0".into(),
        top_p: "1.5".into(),
        seed: "-1".into(),
        ..fields()
    };
    assert_eq!(
        bad.parse().unwrap_err(),
        vec![
            Key::GenBadSteps,
            Key::GenBadTemperature,
            Key::GenBadTopK,
            Key::GenBadTopP,
            Key::GenBadSeed
        ]
    );
    for t in ["-1", "0", "inf", ""] {
        let f = Fields {
            temperature: t.into(),
            ..fields()
        };
        assert_eq!(
            f.parse().unwrap_err(),
            vec![Key::GenBadTemperature],
            "{t:?}"
        );
        // greedy ignores the temperature
        assert!(
            Fields { greedy: true, ..f }
                .parse()
                .unwrap()
                .sampling
                .greedy
        );
    }
    let ok = Fields {
        steps: "12".into(),
        temperature: "0.7".into(),
        top_k: "40".into(),
        top_p: " 0.9 ".into(),
        seed: "2026".into(),
        ..fields()
    }
    .parse()
    .unwrap();
    assert_eq!(ok.steps, 12);
    assert_eq!(
        (ok.sampling.top_k, ok.sampling.top_p, ok.sampling.seed),
        (Some(40), Some(0.9), 2026)
    );
    assert_eq!(Fields::of(&ok).parse().unwrap(), ok);
}
