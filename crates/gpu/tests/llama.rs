//! The Llama family's GPU forward (`LlamaGpuEngine`) against independent references and the
//! CPU twin: Hugging Face transformers' logits and attention weights for small random
//! Llama, Llama 3, Qwen2 and Mistral models (`tools/hf/make_fixtures.py`, the fixtures in
//! crates/model/tests/data/hf), every field of the CPU trace, the attention options, the
//! incremental forward, and SmolLM2 (its GGUF blocks on the GPU) against what transformers
//! computes from the same file.

mod common;

use std::path::{Path, PathBuf};

use attnlab_gpu::{GpuError, LlamaGpuEngine};
use attnlab_model::llama::LlamaModel;
use attnlab_model::{AttentionOptions, Keep};
use common::{assert_close, assert_trace_close, gpu};
use safetensors::SafeTensors;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../model/tests/data/hf")
        .join(name)
}

/// Transformers' token ids, logits (T, V) and each layer's attention weights (H, T, T).
fn expected(dir: &Path) -> (Vec<u32>, Vec<f32>, Vec<Vec<f32>>) {
    let bytes = std::fs::read(dir.join("expected.safetensors")).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let f32s =
        |name: &str| -> Vec<f32> { bytemuck::pod_collect_to_vec(st.tensor(name).unwrap().data()) };
    let ids: Vec<i64> = bytemuck::pod_collect_to_vec(st.tensor("ids").unwrap().data());
    let layers = st.names().iter().filter(|n| n.starts_with("attn.")).count();
    (
        ids.into_iter().map(|i| i as u32).collect(),
        f32s("logits"),
        (0..layers).map(|l| f32s(&format!("attn.{l}"))).collect(),
    )
}

fn engine(m: &LlamaModel) -> Option<LlamaGpuEngine> {
    let g = gpu()?;
    Some(pollster::block_on(LlamaGpuEngine::with_budget(g, m, 64 << 20)).unwrap())
}

const FIXTURES: [&str; 4] = [
    "llama-gqa-tied",
    "llama3-untied-bias",
    "qwen2-mqa",
    "mistral-bf16-sharded",
];

#[test]
fn llama_family_models_match_transformers_and_the_cpu_on_the_gpu() {
    for name in FIXTURES {
        let dir = fixture(name);
        let m = LlamaModel::load_hf_dir(&dir).unwrap();
        let Some(mut e) = engine(&m) else { return };
        let (ids, logits, attn) = expected(&dir);
        let opts = AttentionOptions::default();
        let tr = pollster::block_on(e.forward(&ids, &opts)).unwrap();
        assert_close(&format!("{name} logits"), &tr.logits, &logits, 1e-4, 1e-3);
        for (l, want) in attn.iter().enumerate() {
            let got = &tr.layers[l].weights;
            assert_close(&format!("{name} layer {l} weights"), got, want, 1e-5, 1e-4);
        }
        // every intermediate the views show, against the CPU reference
        let cpu = m.trace(&ids, &opts).unwrap();
        assert_trace_close(name, &tr, &cpu);
    }
}

/// The same Qwen2 and Llama 3 models read from GGUF files (tools/gguf/make_models.py: a qwen2
/// file's q and k not permuted, its biases as `blk.N.attn_q.bias` …; a llama file's permuted,
/// Llama 3's scaling as `rope_freqs.weight`): transformers' logits and attention on the GPU.
#[test]
fn qwen2_and_llama3_gguf_files_match_transformers_on_the_gpu() {
    for name in ["qwen2-mqa", "llama3-untied-bias"] {
        let path = fixture(&format!("../gguf-models/{name}.gguf"));
        let m = attnlab_model::llama::LlamaBundle::from_gguf_bytes(&std::fs::read(path).unwrap())
            .unwrap()
            .model;
        let Some(mut e) = engine(&m) else { return };
        let (ids, logits, attn) = expected(&fixture(name));
        let tr = pollster::block_on(e.forward(&ids, &AttentionOptions::default())).unwrap();
        assert_close(
            &format!("{name}.gguf logits"),
            &tr.logits,
            &logits,
            1e-4,
            1e-3,
        );
        for (l, want) in attn.iter().enumerate() {
            let got = &tr.layers[l].weights;
            assert_close(
                &format!("{name}.gguf layer {l} weights"),
                got,
                want,
                1e-5,
                1e-4,
            );
        }
    }
}

/// Without the maps (`Keep::Streams`): no (H, P, P) buffer, the attention fused. The logits
/// still equal transformers', each head's maps computed from the GPU's q and k equal
/// transformers' attention, every kept field equals the CPU's trace kept the same way — under
/// the options and incrementally — and the buffers hold more positions than with the maps.
#[test]
fn without_the_maps_the_fused_attention_matches_transformers_and_the_cpu() {
    for name in FIXTURES {
        let dir = fixture(name);
        let m = LlamaModel::load_hf_dir(&dir).unwrap();
        let Some(g) = gpu() else { return };
        let mut e =
            pollster::block_on(LlamaGpuEngine::with_keep(g, &m, 64 << 20, Keep::Streams)).unwrap();
        let (ids, logits, attn) = expected(&dir);
        let opts = AttentionOptions::default();
        let tr = pollster::block_on(e.forward(&ids, &opts)).unwrap();
        assert_eq!(tr.kept(), Keep::Streams, "{name}");
        // the prediction after the last position only
        let last = &logits[logits.len() - tr.dims.vocab..];
        assert_close(&format!("{name} logits"), &tr.logits, last, 1e-4, 1e-3);
        let (t, h) = (tr.dims.t, tr.dims.n_head);
        for (l, want) in attn.iter().enumerate() {
            for hh in 0..h {
                let got = tr.head_weights(l, hh);
                let want = &want[hh * t * t..(hh + 1) * t * t];
                assert_close(
                    &format!("{name} layer {l} head {hh}"),
                    &got,
                    want,
                    1e-5,
                    1e-4,
                );
            }
        }
        let cpu = m.trace_kept(None, &ids, &opts, Keep::Streams).unwrap().0;
        assert_trace_close(name, &tr, &cpu);
    }
    let m = LlamaModel::load_hf_dir(&fixture("llama-gqa-tied")).unwrap();
    let Some(g) = gpu() else { return };
    let mut e =
        pollster::block_on(LlamaGpuEngine::with_keep(g, &m, 64 << 20, Keep::Streams)).unwrap();
    let ids: Vec<u32> = (0..12)
        .map(|i| (i * 37 + 5) % m.config.vocab_size as u32)
        .collect();
    for opts in [
        AttentionOptions {
            scale: false,
            temperature: 0.3,
            ablate: [(0, 1), (1, 3)].into(),
            ..Default::default()
        },
        AttentionOptions {
            causal_mask: false,
            ..Default::default()
        },
    ] {
        let gpu = pollster::block_on(e.forward_full(&ids, &opts)).unwrap();
        let cpu = m.trace_kept(None, &ids, &opts, Keep::Streams).unwrap().0;
        assert_trace_close(&format!("{opts:?}"), &gpu, &cpu);
    }
    let opts = AttentionOptions::default();
    pollster::block_on(e.forward(&ids[..7], &opts)).unwrap();
    let grown = pollster::block_on(e.forward(&ids, &opts)).unwrap();
    assert!(e.last_was_incremental());
    let cpu = m.trace_kept(None, &ids, &opts, Keep::Streams).unwrap().0;
    assert_trace_close("incremental", &grown, &cpu);
    // the same budget holds more positions without the maps
    let capacity = |keep| {
        let g = gpu().unwrap();
        let e = pollster::block_on(LlamaGpuEngine::with_keep(g, &m, 1 << 20, keep)).unwrap();
        e.capacity()
    };
    let (lean, whole) = (capacity(Keep::Streams), capacity(Keep::All));
    assert!(lean > whole, "{lean} vs {whole}");
}

#[test]
fn options_and_the_incremental_forward_match_the_cpu() {
    let m = LlamaModel::load_hf_dir(&fixture("llama-gqa-tied")).unwrap();
    let Some(mut e) = engine(&m) else { return };
    let ids: Vec<u32> = (0..12)
        .map(|i| (i * 37 + 5) % m.config.vocab_size as u32)
        .collect();
    let mut ablate = std::collections::BTreeSet::new();
    ablate.insert((0, 1));
    ablate.insert((1, 3));
    for (what, opts) in [
        (
            "unscaled",
            AttentionOptions {
                scale: false,
                ..Default::default()
            },
        ),
        (
            "τ 0.3",
            AttentionOptions {
                temperature: 0.3,
                ..Default::default()
            },
        ),
        (
            "no mask",
            AttentionOptions {
                causal_mask: false,
                ..Default::default()
            },
        ),
        (
            "heads off",
            AttentionOptions {
                ablate,
                ..Default::default()
            },
        ),
    ] {
        let cpu = m.trace(&ids, &opts).unwrap();
        let gpu = pollster::block_on(e.forward_full(&ids, &opts)).unwrap();
        assert_trace_close(what, &gpu, &cpu);
    }
    // typing at the end: the second forward computes the new rows only
    let opts = AttentionOptions::default();
    pollster::block_on(e.forward(&ids[..7], &opts)).unwrap();
    let grown = pollster::block_on(e.forward(&ids, &opts)).unwrap();
    assert!(e.last_was_incremental());
    assert_trace_close("incremental", &grown, &m.trace(&ids, &opts).unwrap());
    // an edit of the first token: a full forward
    let mut edited = ids.clone();
    edited[0] = 1;
    let tr = pollster::block_on(e.forward(&edited, &opts)).unwrap();
    assert!(!e.last_was_incremental());
    assert_trace_close("edited", &tr, &m.trace(&edited, &opts).unwrap());
}

#[test]
fn bad_requests_are_errors_and_the_engine_stays_usable() {
    let m = LlamaModel::load_hf_dir(&fixture("qwen2-mqa")).unwrap();
    let Some(g) = gpu() else { return };
    // a budget of one byte: the buffers hold the fewest positions (16), fewer than the context
    let mut e = pollster::block_on(LlamaGpuEngine::with_budget(g, &m, 1)).unwrap();
    assert!(
        e.capacity() == 16 && m.config.context > 16,
        "{}",
        e.capacity()
    );
    let opts = AttentionOptions::default();
    let v = m.config.vocab_size as u32;
    assert!(matches!(
        pollster::block_on(e.forward(&[], &opts)),
        Err(GpuError::Model(_))
    ));
    let err = pollster::block_on(e.forward(&[1, v], &opts)).unwrap_err();
    assert!(err.to_string().contains(&v.to_string()), "{err}");
    let too_long = vec![1u32; e.capacity() + 1];
    assert!(matches!(
        pollster::block_on(e.forward(&too_long, &opts)),
        Err(GpuError::TooLong { .. })
    ));
    let bad = AttentionOptions {
        temperature: 0.0,
        ..Default::default()
    };
    assert!(pollster::block_on(e.forward(&[1, 2], &bad)).is_err());
    let ok = pollster::block_on(e.forward(&[1, 2, 3], &opts)).unwrap();
    assert_trace_close("after errors", &ok, &m.trace(&[1, 2, 3], &opts).unwrap());
}

/// SmolLM2's GGUF file (Q4_1 blocks, a Q8_0 embedding tied to the head) on the GPU: against
/// what transformers computes from the same file (crates/model/tests/data/
/// smollm2-transformers.json: the logits of its 20 likeliest next tokens at every position
/// of nine texts, three heads' attention weights) and against the CPU trace.
#[test]
#[ignore = "needs SmolLM2-135M-Instruct.Q4_1.gguf (the test command fetches it)"]
fn smollm2_on_the_gpu_matches_transformers_and_the_cpu() {
    use serde_json::Value;
    let path = std::env::var("ATTNLAB_SMOLLM2").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/models/SmolLM2-135M-Instruct.Q4_1.gguf"
        )
        .into()
    });
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let m = attnlab_model::llama::LlamaBundle::from_gguf_bytes(&bytes)
        .unwrap()
        .model;
    drop(bytes);
    let Some(g) = gpu() else { return };
    let mut e = pollster::block_on(LlamaGpuEngine::with_budget(g, &m, 1 << 30)).unwrap();
    println!(
        "SmolLM2 on {}: {} positions, {:.1} MB of weights on the GPU",
        e.adapter_info().name,
        e.capacity(),
        e.weight_bytes() as f64 / 1e6
    );
    let doc: Value = serde_json::from_str(include_str!(
        "../../model/tests/data/smollm2-transformers.json"
    ))
    .unwrap();
    let v = m.config.vocab_size;
    let opts = AttentionOptions::default();
    let (mut logit_max, mut attn_max) = (0f32, 0f32);
    for (i, (text, want)) in doc["texts"].as_object().unwrap().iter().enumerate() {
        let ids: Vec<u32> = want["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as u32)
            .collect();
        let tr = pollster::block_on(e.forward_full(&ids, &opts)).unwrap();
        for (p, top) in want["top"].as_array().unwrap().iter().enumerate() {
            let ids = top["ids"].as_array().unwrap();
            for (id, logit) in ids.iter().zip(top["logits"].as_array().unwrap()) {
                let ours = tr.logits[p * v + id.as_u64().unwrap() as usize];
                logit_max = logit_max.max((ours - logit.as_f64().unwrap() as f32).abs());
            }
        }
        for (key, rows) in want["attention"].as_object().unwrap() {
            let (l, h) = key.split_once('.').unwrap();
            let w = tr.head(l.parse().unwrap(), h.parse().unwrap()).weights;
            for (r, row) in rows.as_array().unwrap().iter().enumerate() {
                for (j, x) in row.as_array().unwrap().iter().enumerate() {
                    let d = (w[r * ids.len() + j] - x.as_f64().unwrap() as f32).abs();
                    attn_max = attn_max.max(d);
                }
            }
        }
        // the first text: every field against the CPU's trace
        if i == 0 {
            let cpu = m.trace(&ids, &opts).unwrap();
            for ((name, x), (_, y)) in tr.fields().into_iter().zip(cpu.fields()) {
                assert_close(&format!("{text:?} {name}"), x, y, 2e-3, 2e-3);
            }
        }
    }
    println!("against transformers: logits of its 20 likeliest differ by max {logit_max:.5}; attention weights max {attn_max:.6}");
    assert!(logit_max < 2e-3, "{logit_max}");
    assert!(attn_max < 5e-5, "{attn_max}");
}

/// The malformed-GGUF corpus's valid file (a tiny llama model with Q5_0 and other blocks) on
/// the GPU, against the CPU.
#[test]
fn a_gguf_file_of_other_block_types_runs_on_the_gpu() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../model/tests/data/malformed-gguf/valid.gguf"
    ))
    .unwrap();
    let m = attnlab_model::llama::LlamaBundle::from_gguf_bytes(&bytes)
        .unwrap()
        .model;
    let Some(mut e) = engine(&m) else { return };
    let opts = AttentionOptions::default();
    let ids = [1, 2, 3, 40, 5];
    let tr = pollster::block_on(e.forward(&ids, &opts)).unwrap();
    assert_trace_close("valid.gguf", &tr, &m.trace(&ids, &opts).unwrap());
}

/// A long text's page on the GPU for a Llama-family model (grouped keys and values, RoPE):
/// the engine made again without the maps (`with_new_keep`, its rotation table made for the
/// new positions), then slim forwards — typed at the end, edited in the middle, τ and the
/// mask changed, heads switched off — each equal to the CPU's whole trace in its prediction,
/// its asked heads' maps and its pooled thumbnails and roles (`common::check_slim`).
#[test]
fn a_slim_forward_gives_the_cpus_heads_and_thumbnails() {
    use attnlab_gpu::AnyEngine;
    for name in ["llama-gqa-tied", "qwen2-mqa"] {
        let m = LlamaModel::load_hf_dir(&fixture(name)).unwrap();
        let Some(e) = engine(&m) else { return };
        let e = AnyEngine::Llama(Box::new(e));
        let mut e = pollster::block_on(e.with_new_keep(64 << 20, Keep::Streams)).unwrap();
        let v = m.config.vocab_size as u32;
        let ids = |n: u32| -> Vec<u32> { (0..n).map(|i| (i * 37 + 5) % v).collect() };
        let mut edited = ids(30);
        edited[7] = (edited[7] + 1) % v;
        let whole = AttentionOptions::default();
        let runs = [
            (ids(20), whole.clone()),
            (ids(23), whole.clone()),
            (ids(30), whole.clone()),
            (edited.clone(), whole.clone()),
            (
                edited,
                AttentionOptions {
                    scale: false,
                    temperature: 0.3,
                    ablate: [(0, 1)].into(),
                    ..Default::default()
                },
            ),
            (
                ids(26),
                AttentionOptions {
                    causal_mask: false,
                    ..Default::default()
                },
            ),
        ];
        let cpu = |x: &[u32], o: &AttentionOptions| m.trace(x, o).unwrap();
        let last = m.config.n_layer - 1;
        let reused = common::check_slim(&mut e, cpu, &runs, &[(last, 1), (0, 0)], 8);
        assert_eq!(reused, [false, true, true, true, false, false], "{name}");
    }
}
