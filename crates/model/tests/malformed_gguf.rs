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

#[test]
fn the_head_of_a_file_gives_its_config_and_tokenizer_and_a_head_too_short_is_refused() {
    let bytes = std::fs::read(corpus().join("valid.gguf")).unwrap();
    let whole = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
    // the directory ends before the first tensor's bytes
    let data = whole.tensors.iter().map(|t| t.start).min().unwrap();
    let (g, config, tokenizer) = LlamaBundle::read_head(&bytes[..data], bytes.len()).unwrap();
    assert_eq!(g.tensors.len(), whole.tensors.len());
    assert_eq!(config.n_head, 4);
    assert_eq!(
        tokenizer.ids("the cat").unwrap(),
        LlamaBundle::from_gguf_bytes(&bytes)
            .unwrap()
            .tokenizer
            .ids("the cat")
            .unwrap()
    );
    // a head that stops inside the metadata, or a file shorter than its directory says
    let err = LlamaBundle::read_head(&bytes[..data / 2], bytes.len()).unwrap_err();
    assert!(err.to_string().contains("ends inside"), "{err}");
    let err = LlamaBundle::read_head(&bytes[..data], data + 8).unwrap_err();
    assert!(err.to_string().contains("lies outside the file"), "{err}");
}

#[test]
fn a_llama_configs_parameter_count_is_its_tensors_sizes() {
    let bytes = std::fs::read(corpus().join("valid.gguf")).unwrap();
    let g = attnlab_model::gguf::Gguf::parse(&bytes).unwrap();
    let tied = g.tensor("output.weight").is_none();
    let config = attnlab_model::llama::LlamaConfig::from_gguf(&g).unwrap();
    let counted: usize = g
        .tensors
        .iter()
        .map(|t| t.shape.iter().product::<usize>())
        .sum();
    assert_eq!(config.n_params(tied, false), counted);
}
