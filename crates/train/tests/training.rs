//! Smoke training, exact resume, every parameter learning, and candle ↔ engine parity.

use attnlab_model::testing::char_bpe_tokenizer_json;
use attnlab_model::{forward, AttentionOptions, Config, LnPlacement, Tokenizer};
use attnlab_train::data;
use attnlab_train::run::{Hyper, Trainer};
use candle_core::Tensor;

const TEXT: &str = "나는 어제 산 커피를 오늘 마셨다\nWhich do you like better, coffee or tea?\n\
민수는 어제 산 빵을 오늘 먹었다\n지영은 오늘 차를 마셨다. 그리고 그녀는 책을 읽었다.\n\
I drank the coffee I bought yesterday.\nShe likes tea, but he likes coffee.\n";

fn setup(ln: LnPlacement) -> (Config, Hyper, Vec<u32>) {
    let chars: String = TEXT
        .chars()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let tok = Tokenizer::from_bytes(char_bpe_tokenizer_json(&chars).as_bytes()).unwrap();
    let stream = data::encode_lines(&tok, &TEXT.repeat(20)).unwrap();
    let config = Config {
        n_embd: 32,
        n_head: 4,
        n_layer: 2,
        n_positions: 16,
        vocab_size: tok.vocab_size(),
        layer_norm_epsilon: 1e-5,
        n_inner: None,
        activation_function: Default::default(),
        ln_placement: ln,
        scale_embedding: false,
    };
    let hyper = Hyper {
        seed: 7,
        steps: 60,
        batch: 8,
        seq: 16,
        lr: 1e-2,
        lr_floor: 0.1,
        warmup: 5,
        weight_decay: 0.1,
        clip: 1.0,
        eval_every: 20,
        eval_windows: 8,
        ckpt_every: 1000,
        emb_std: 0.02,
        pos_std: None,
        pos_sinusoid: false,
        decay_embeddings: true,
    };
    (config, hyper, stream)
}

#[test]
fn smoke_training_lowers_the_loss() {
    let (config, hyper, stream) = setup(LnPlacement::Post);
    let mut t = Trainer::new(&config, hyper).unwrap();
    let before = t.evaluate(&stream).unwrap();
    t.train(&stream, &stream, 60, None, |_, _, _, _| {})
        .unwrap();
    let after = t.evaluate(&stream).unwrap();
    eprintln!("SMOKE loss {before} → {after}");
    assert!(after < 0.6 * before, "loss {before} → {after}");
    assert_eq!(t.log.valid.len(), 3);
}

#[test]
fn every_parameter_receives_a_gradient() {
    for ln in [LnPlacement::Post, LnPlacement::Pre] {
        let (config, hyper, stream) = setup(ln);
        let t = Trainer::new(&config, hyper).unwrap();
        let batch = data::batch(&stream, 4, 16, 1, 0).unwrap();
        let grads = t.gpt.loss(&batch).unwrap().backward().unwrap();
        let vars = t.varmap.data().lock().unwrap();
        assert_eq!(
            vars.len(),
            attnlab_model::weights::tensor_specs(&config, ln == LnPlacement::Pre).len()
        );
        for (name, var) in vars.iter() {
            let g = grads
                .get(var)
                .unwrap_or_else(|| panic!("{ln:?}: no gradient for {name}"));
            let norm = g
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(norm > 0.0, "{ln:?}: zero gradient for {name}");
        }
    }
}

fn weights(t: &Trainer) -> Vec<(String, Vec<f32>)> {
    let vars = t.varmap.data().lock().unwrap();
    let mut out: Vec<_> = vars
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn resuming_from_a_checkpoint_reproduces_the_straight_run() {
    let (config, hyper, stream) = setup(LnPlacement::Post);
    let dir = tempfile_dir();
    let mut straight = Trainer::new(&config, hyper.clone()).unwrap();
    straight
        .train(&stream, &stream, 10, None, |_, _, _, _| {})
        .unwrap();

    let mut first = Trainer::new(&config, hyper.clone()).unwrap();
    first
        .train(&stream, &stream, 4, Some(&dir), |_, _, _, _| {})
        .unwrap();
    first.save_checkpoint(&dir).unwrap();
    // the checkpoint folder carries the shape, so it loads as a model beside a tokenizer
    let saved = Config::from_json(&std::fs::read(dir.join("config.json")).unwrap()).unwrap();
    assert_eq!(saved, config);
    let mut resumed = Trainer::new(&config, hyper).unwrap();
    assert!(resumed.load_checkpoint(&dir).unwrap());
    assert_eq!(resumed.step(), 4);
    resumed
        .train(&stream, &stream, 10, None, |_, _, _, _| {})
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(weights(&straight), weights(&resumed));
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!(
        "attnlab-train-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn candle_training_forward_equals_the_engine() {
    for (ln, scaled) in [
        (LnPlacement::Post, false),
        (LnPlacement::Pre, false),
        (LnPlacement::Post, true),
    ] {
        let (mut config, hyper, stream) = setup(ln);
        config.scale_embedding = scaled;
        let mut t = Trainer::new(&config, hyper).unwrap();
        t.train(&stream, &stream, 15, None, |_, _, _, _| {})
            .unwrap();
        let model = t.to_model().unwrap();
        let ids: Vec<u32> = stream[3..17].to_vec();
        let ours = forward(&model, &ids, &AttentionOptions::default()).unwrap();
        let x = Tensor::from_vec(ids.clone(), (1, ids.len()), &candle_core::Device::Cpu).unwrap();
        let theirs = t
            .gpt
            .forward(&x)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        for (i, (a, b)) in ours.logits.iter().zip(&theirs).enumerate() {
            assert!(
                (a - b).abs() <= 1e-4,
                "{ln:?} (scaled {scaled}) logit {i}: engine {a}, candle {b}"
            );
        }
    }
}

#[test]
fn embeddings_can_start_larger_and_skip_weight_decay() {
    use attnlab_train::adamw::AdamW;
    let (config, hyper, _) = setup(LnPlacement::Post);
    let big = Trainer::new(
        &config,
        Hyper {
            emb_std: 0.5,
            ..hyper.clone()
        },
    )
    .unwrap();
    let small = Trainer::new(&config, hyper.clone()).unwrap();
    let rms = |t: &Trainer, name: &str| {
        let data = t.varmap.data().lock().unwrap();
        let v: Vec<f32> = data[name].flatten_all().unwrap().to_vec1().unwrap();
        (v.iter().map(|x| x * x).sum::<f32>() / v.len() as f32).sqrt()
    };
    assert!(rms(&big, "wte.weight") > 10.0 * rms(&small, "wte.weight"));
    assert!(rms(&big, "wpe.weight") > 10.0 * rms(&small, "wpe.weight"));
    // the position embedding on its own
    let pos = Trainer::new(
        &config,
        Hyper {
            pos_std: Some(0.5),
            ..hyper.clone()
        },
    )
    .unwrap();
    assert!(rms(&pos, "wpe.weight") > 10.0 * rms(&small, "wpe.weight"));
    assert!((rms(&pos, "wte.weight") - rms(&small, "wte.weight")).abs() < 1e-6);
    assert!(
        (rms(&big, "h.0.attn.c_attn.weight") - rms(&small, "h.0.attn.c_attn.weight")).abs() < 1e-6
    );
    // the sinusoid table: row 0 alternates sin 0 = 0 and cos 0 = 1; each row's (sin, cos)
    // pair is the previous row's turned by that pair's frequency
    let sin = Trainer::new(
        &config,
        Hyper {
            pos_sinusoid: true,
            ..hyper.clone()
        },
    )
    .unwrap();
    let wpe: Vec<Vec<f32>> = sin.varmap.data().lock().unwrap()["wpe.weight"]
        .to_vec2()
        .unwrap();
    let d = config.n_embd;
    assert_eq!(wpe.len(), config.n_positions);
    assert!((0..d).all(|j| wpe[0][j] == if j % 2 == 0 { 0.0 } else { 1.0 }));
    for p in 1..config.n_positions {
        for i in 0..d / 2 {
            let w = 10000f32.powf(-((2 * i) as f32) / d as f32);
            let (s0, c0) = (wpe[p - 1][2 * i], wpe[p - 1][2 * i + 1]);
            let turned = (s0 * w.cos() + c0 * w.sin(), c0 * w.cos() - s0 * w.sin());
            assert!((turned.0 - wpe[p][2 * i]).abs() < 1e-4, "p {p} pair {i}");
            assert!(
                (turned.1 - wpe[p][2 * i + 1]).abs() < 1e-4,
                "p {p} pair {i}"
            );
        }
    }
    assert!((rms(&sin, "wte.weight") - rms(&small, "wte.weight")).abs() < 1e-6);
    // which variables decay
    let named: Vec<(String, candle_core::Var)> = small
        .varmap
        .data()
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let with = AdamW::new(named.clone(), 0.1, true).unwrap().decays();
    let without = AdamW::new(named, 0.1, false).unwrap().decays();
    assert!(with.contains(&"wte.weight".to_string()) && with.contains(&"wpe.weight".to_string()));
    assert!(!without
        .iter()
        .any(|n| n.starts_with("wte") || n.starts_with("wpe")));
    assert!(without.contains(&"h.0.attn.c_attn.weight".to_string()));
    assert!(!with.iter().any(|n| n.ends_with("bias")));
}
