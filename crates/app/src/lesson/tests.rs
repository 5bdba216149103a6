use super::*;

fn round2(xs: &[f64]) -> Vec<f64> {
    xs.iter().map(|x| (x * 100.0).round() / 100.0).collect()
}

#[test]
fn the_lessons_softmax_example_has_these_true_values() {
    // the values (the lesson's diagram rounds them differently)
    assert_eq!(
        round2(&softmax(&SOFTMAX_SCORES)),
        vec![0.25, 0.10, 0.60, 0.05]
    );
    let s: f64 = softmax(&SOFTMAX_SCORES).iter().sum();
    assert!((s - 1.0).abs() < 1e-6);
    assert!(softmax(&[]).is_empty());
}

#[test]
fn scaling_the_lessons_scores_by_the_root_of_64() {
    let scaled: Vec<f64> = SCALING_SCORES
        .iter()
        .map(|x| x / (SCALING_DK as f64).sqrt())
        .collect();
    assert_eq!(scaled, vec![0.25, 0.5, 2.5, 0.375]);
    let raw = softmax(&SCALING_SCORES);
    assert!(
        raw[2] > 0.999_999 && raw[0] < 1e-7,
        "unscaled: one-hot {raw:?}"
    );
    let soft = softmax(&scaled);
    assert!(
        soft[2] < 0.75 && soft[0] > 0.05,
        "scaled: spread out {soft:?}"
    );
}

#[test]
fn dot_product_variance_grows_with_dk_and_scaling_undoes_it() {
    for &dk in &VARIANCE_DKS {
        let (var, scaled) = dot_variance(dk, 4000, 1);
        assert!((var / dk as f64 - 1.0).abs() < 0.12, "d_k {dk}: var {var}");
        assert!((scaled - 1.0).abs() < 0.12, "d_k {dk}: scaled var {scaled}");
    }
    assert!(dot_variance(256, 2000, 2).0 > 10.0 * dot_variance(4, 2000, 2).0);
    assert_eq!(dot_variance(16, 100, 5), dot_variance(16, 100, 5));
}

#[test]
fn scores_parse_leniently_but_not_blindly() {
    assert_eq!(parse_scores("2, 4, 20, 3"), Ok(vec![2.0, 4.0, 20.0, 3.0]));
    assert_eq!(
        parse_scores("1.2 0.3;2.1 −0.4"),
        Ok(vec![1.2, 0.3, 2.1, -0.4])
    );
    assert_eq!(parse_scores("1, x2"), Err("x2".into()));
    assert!(parse_scores("").is_err());
    assert!(parse_scores("NaN").is_err());
    assert!(parse_scores("1e400").is_err());
    assert!(parse_scores(&"1 ".repeat(17)).is_err());
}

#[test]
fn sections_are_in_order_and_name_a_panel() {
    assert_eq!(Section::ALL.len(), 9);
    for (i, s) in Section::ALL.iter().enumerate() {
        assert_eq!(s.index(), i);
        assert!(s.panel().ends_with("-card"));
    }
    assert_eq!(Section::at(99), Section::Block);
}

#[test]
fn the_clearest_head_is_the_most_focused_non_sink() {
    let mut r = vec![Scores::default(); 4];
    for (i, (broad, first)) in [(0.2, 0.9), (0.5, 0.1), (0.3, 0.2), (0.9, 0.0)]
        .iter()
        .enumerate()
    {
        r[i].set(Role::Broad, Some(*broad));
        r[i].set(Role::First, Some(*first));
    }
    // head 0 is a sink (first 0.9 ≥ 0.5): the clearest other is head 2 (broad 0.3)
    assert_eq!(clearest_head(&r, 2), Some((1, 0)));
    assert_eq!(
        clearest_head(&[Scores::default()], 1),
        None,
        "too short to say"
    );
}

#[test]
fn top_keys_are_sorted_by_weight_over_every_head() {
    use attnlab_model::testing::{random_model, tiny_config};
    use attnlab_model::{forward, AttentionOptions, LnPlacement};
    let model = random_model(&tiny_config(LnPlacement::Post), 3, 2.0);
    let tr = forward(&model, &[1, 4, 2, 8], &AttentionOptions::default()).unwrap();
    let keys = top_keys(&tr, 3);
    assert_eq!(keys.len(), 4, "2 layers × 2 heads");
    assert!(keys.windows(2).all(|w| w[0].weight >= w[1].weight));
    for k in &keys {
        let row = &tr.head(k.layer, k.head).weights[12..16];
        assert_eq!(row[k.key], k.weight);
        assert!(row.iter().all(|&w| w <= k.weight));
    }
}

#[test]
fn a_word_is_its_tokens_up_to_the_next_space_mark() {
    let labels = ["나는", "␣어제", "␣산", "␣커피", "를", "␣오늘", "␣마셨다"];
    assert_eq!(
        word_spans(&labels, 7),
        vec![0..1, 1..2, 2..3, 3..5, 5..6, 6..7]
    );
    // only the first n tokens (the keys up to the query)
    assert_eq!(word_spans(&labels, 4), vec![0..1, 1..2, 2..3, 3..4]);
    assert_eq!(word_spans(&["를", "를"], 2), vec![0..2]);
    assert!(word_spans::<&str>(&[], 3).is_empty());
    // a line break ends a word even when the next token has no space mark
    assert_eq!(
        word_spans(&["나는", "⏎", "커피", "를"], 4),
        vec![0..2, 2..4]
    );
    assert_eq!(word_text(&labels, &(3..5)), "커피를");
    assert_eq!(word_text(&labels, &(0..1)), "나는");
}

#[test]
fn the_word_pattern_adds_a_words_token_weights() {
    use attnlab_model::testing::{random_model, tiny_config};
    use attnlab_model::{forward, AttentionOptions, LnPlacement};
    let model = random_model(&tiny_config(LnPlacement::Post), 3, 2.0);
    let tr = forward(&model, &[1, 4, 2, 8, 3], &AttentionOptions::default()).unwrap();
    let words = vec![0..1, 1..3, 3..4, 4..5];
    let t = tr.dims.t;
    let mut seen_top = 0;
    for target in 0..words.len() {
        let p = word_pattern(&tr, 4, &words, target).unwrap();
        for w in p.top.iter().chain([&p.best]) {
            let row = &tr.head(w.layer, w.head).weights[4 * t..5 * t];
            assert_eq!(w.parts, row[words[target].clone()].to_vec());
            assert!((w.weight - w.parts.iter().sum::<f32>()).abs() < 1e-6);
        }
        for w in &p.top {
            // the target is this head's largest word
            let row = &tr.head(w.layer, w.head).weights[4 * t..5 * t];
            for r in &words {
                assert!(row[r.clone()].iter().sum::<f32>() <= w.weight + 1e-6);
            }
        }
        assert!(p.top.windows(2).all(|x| x[0].weight >= x[1].weight));
        // the best head gives the target the most of any head
        for l in 0..tr.dims.n_layer {
            for h in 0..tr.dims.n_head {
                let row = &tr.head(l, h).weights[4 * t..5 * t];
                assert!(row[words[target].clone()].iter().sum::<f32>() <= p.best.weight + 1e-6);
            }
        }
        seen_top += p.top.len();
    }
    // every head has exactly one largest word
    assert_eq!(seen_top, tr.dims.n_layer * tr.dims.n_head);
    // a word that does not end by the query is not a key of it
    assert!(word_pattern(&tr, 2, &words, 3).is_none());
    assert!(word_pattern(&tr, 4, &words, 9).is_none());
}
