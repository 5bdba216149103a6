//! The malformed-GGUF corpus (tests/data/malformed-gguf, written by
//! `tools/gguf/make_malformed.py` with gguf-py): every case is refused with an error that
//! names the problem (the words of its `.expect` file) and no panic; the valid file beside
//! them loads and runs.

use std::path::PathBuf;

use attnlab_model::llama::LlamaBundle;

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/malformed-gguf")
}

#[test]
fn every_malformed_gguf_file_is_refused_with_an_error_that_names_the_problem() {
    let (mut cases, mut wrong) = (0, Vec::new());
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "expect") {
            continue;
        }
        cases += 1;
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let bytes = std::fs::read(path.with_extension("gguf")).unwrap();
        let err = match LlamaBundle::from_gguf_bytes(&bytes) {
            Ok(_) => {
                wrong.push(format!("{name}: loaded"));
                continue;
            }
            Err(e) => e.to_string(),
        };
        for word in std::fs::read_to_string(&path).unwrap().lines() {
            if !err.contains(word) {
                wrong.push(format!("{name}: {err:?} does not mention {word:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(cases >= 30, "{cases} cases");
}

#[test]
fn the_valid_file_of_the_corpus_loads_and_runs() {
    let bytes = std::fs::read(corpus().join("valid.gguf")).unwrap();
    let b = LlamaBundle::from_gguf_bytes(&bytes).unwrap();
    let c = &b.model.config;
    assert_eq!(
        (
            c.n_layer,
            c.n_embd,
            c.n_head,
            c.n_kv_head,
            c.n_ff,
            c.vocab_size
        ),
        (1, 32, 4, 2, 64, 261)
    );
    let ids = b.tokenizer.ids("the cat is there").unwrap();
    // "Ġthe" and "is" are merges of the file's vocabulary
    assert!(ids.contains(&259) && ids.contains(&258), "{ids:?}");
    let logits = b.model.logits(&ids).unwrap();
    assert_eq!(logits.len(), ids.len() * 261);
    assert!(logits.iter().all(|x| x.is_finite()));
}

/// The attention options act inside the Llama forward as they do in the GPT-2 one.
#[test]
fn the_attention_options_act_inside_the_llama_forward() {
    use attnlab_model::AttentionOptions;
    let bytes = std::fs::read(corpus().join("valid.gguf")).unwrap();
    let m = LlamaBundle::from_gguf_bytes(&bytes).unwrap().model;
    let ids = [3u32, 70, 259, 12, 258, 100];
    let t = ids.len();
    let maps = |opts: &AttentionOptions| m.maps(&ids, opts).unwrap().weights;
    let plain = maps(&AttentionOptions::default());
    for (r, row) in plain.chunks(t).enumerate() {
        let i = r % t;
        assert!(row[i + 1..].iter().all(|&w| w == 0.0), "row {i} sees ahead");
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    let unmasked = maps(&AttentionOptions {
        causal_mask: false,
        ..Default::default()
    });
    assert!(unmasked.chunks(t).all(|row| row[t - 1] > 0.0));
    // no scaling with τ = √d_k is the scaled softmax
    let same = maps(&AttentionOptions {
        scale: false,
        temperature: (m.config.head_dim as f32).sqrt(),
        ..Default::default()
    });
    assert!(same.iter().zip(&plain).all(|(a, b)| (a - b).abs() < 1e-5));
    // a very hot softmax spreads every row evenly over the keys it sees
    let hot = maps(&AttentionOptions {
        temperature: 1e6,
        ..Default::default()
    });
    for (r, row) in hot.chunks(t).enumerate() {
        let i = r % t;
        assert!(row[..=i]
            .iter()
            .all(|&w| (w - 1.0 / (i + 1) as f32).abs() < 1e-4));
    }
    // with every head off, a position's logits depend on its own token only
    let off = AttentionOptions {
        ablate: (0..m.config.n_head).map(|h| (0, h)).collect(),
        ..Default::default()
    };
    let last = |ids: &[u32]| {
        let v = m.config.vocab_size;
        let l = m.logits_with(ids, &off, |_, _, _| {}).unwrap();
        l[(ids.len() - 1) * v..].to_vec()
    };
    assert_eq!(last(&[5, 9, 100]), last(&[200, 100]));
    let on = m.logits(&[5, 9, 100]).unwrap();
    assert_ne!(on[2 * m.config.vocab_size..], last(&[200, 100])[..]);
    let too_many = AttentionOptions {
        ablate: [(1, 0)].into(),
        ..Default::default()
    };
    assert!(m
        .logits_with(&ids, &too_many, |_, _, _| {})
        .unwrap_err()
        .to_string()
        .contains("cannot ablate head 1.0"));
}
