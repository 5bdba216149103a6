//! Which of the files a user dropped or picked make a model: one `.gguf` file, or
//! config.json, tokenizer.json and the weights — one `.safetensors` (model.safetensors
//! preferred) or the shards a model.safetensors.index.json names. Pure, so it is tested
//! natively.

/// The GGUF file among `names`, when there is exactly one.
pub fn pick_gguf(names: &[String]) -> Result<Option<usize>, String> {
    let ggufs: Vec<usize> = (0..names.len())
        .filter(|&i| names[i].to_ascii_lowercase().ends_with(".gguf"))
        .collect();
    match ggufs.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(*one)),
        more => Err(format!(
            "{} .gguf files: give one model at a time",
            more.len()
        )),
    }
}

/// Where a model's weights are among the files given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Weights {
    /// One safetensors file.
    One(usize),
    /// A sharded model: its `model.safetensors.index.json`, which names the shards
    /// (`shards_among` finds them once it is read).
    Sharded { index: usize },
}

/// The model files among the names given: config.json, tokenizer.json and the weights.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picked {
    pub config: usize,
    pub tokenizer: usize,
    pub weights: Weights,
}

/// A file name without its folders, lower case (names are matched so).
fn base(n: &str) -> String {
    n.rsplit(['/', '\\'])
        .next()
        .unwrap_or(n)
        .to_ascii_lowercase()
}

/// Finds config.json, tokenizer.json and the weights in `names`: model.safetensors,
/// model.safetensors.index.json (a sharded model), or the only `.safetensors` file; or the
/// names of what is missing.
pub fn pick(names: &[String]) -> Result<Picked, Vec<String>> {
    let find = |want: &str| names.iter().position(|n| base(n) == want);
    let config = find("config.json");
    let tokenizer = find("tokenizer.json");
    let st: Vec<usize> = (0..names.len())
        .filter(|&i| base(&names[i]).ends_with(".safetensors"))
        .collect();
    let only = match st[..] {
        [one] => Some(one),
        _ => None,
    };
    // an index before a lone .safetensors file: that may be one of its shards
    let index = find("model.safetensors.index.json").map(|index| Weights::Sharded { index });
    let weights = match find("model.safetensors") {
        Some(w) => Some(Weights::One(w)),
        None => index.or(only.map(Weights::One)),
    };
    let mut missing = Vec::new();
    if config.is_none() {
        missing.push("config.json".to_string());
    }
    if weights.is_none() {
        missing.push(if st.len() > 1 {
            format!(
                "model.safetensors.index.json ({} .safetensors files: the index says which shards make the model)",
                st.len()
            )
        } else {
            "model.safetensors".to_string()
        });
    }
    if tokenizer.is_none() {
        missing.push("tokenizer.json".to_string());
    }
    match (config, tokenizer, weights) {
        (Some(config), Some(tokenizer), Some(weights)) => Ok(Picked {
            config,
            tokenizer,
            weights,
        }),
        _ => Err(missing),
    }
}

/// The indices in `names` of the shard files `shards` (an index's names), in that order; or
/// the shards that are not among them.
pub fn shards_among(shards: &[String], names: &[String]) -> Result<Vec<usize>, Vec<String>> {
    let mut missing = Vec::new();
    let found: Vec<usize> = shards
        .iter()
        .filter_map(|s| {
            let at = names.iter().position(|n| base(n) == s.to_ascii_lowercase());
            if at.is_none() {
                missing.push(s.clone());
            }
            at
        })
        .collect();
    if missing.is_empty() {
        Ok(found)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::{pick, pick_gguf, shards_among, Picked, Weights};

    #[test]
    fn one_gguf_file_is_a_model_and_two_are_refused() {
        let n = names(&["notes.txt", "models/SmolLM2.Q4_1.GGUF"]);
        assert_eq!(pick_gguf(&n), Ok(Some(1)));
        assert_eq!(pick_gguf(&names(&["config.json"])), Ok(None));
        assert!(pick_gguf(&names(&["a.gguf", "b.gguf"]))
            .unwrap_err()
            .contains("2 .gguf files"));
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_the_three_files_in_any_order_and_folder() {
        let n = names(&[
            "gpt2/tokenizer.json",
            "gpt2/README.md",
            "gpt2/model.safetensors",
            "gpt2/config.json",
        ]);
        assert_eq!(pick(&n), Ok(picked(3, 0, Weights::One(2))));
        // another name for the weights is fine when it is the only one
        assert_eq!(
            pick(&names(&["Config.JSON", "w.safetensors", "tokenizer.json"])),
            Ok(picked(0, 2, Weights::One(1)))
        );
    }

    fn picked(config: usize, tokenizer: usize, weights: Weights) -> Picked {
        Picked {
            config,
            tokenizer,
            weights,
        }
    }

    #[test]
    fn a_sharded_model_is_its_index_and_the_shards_it_names() {
        let n = names(&[
            "m/model-00002-of-00002.safetensors",
            "m/config.json",
            "m/model.safetensors.index.json",
            "m/tokenizer.json",
            "m/model-00001-of-00002.safetensors",
        ]);
        assert_eq!(pick(&n), Ok(picked(1, 3, Weights::Sharded { index: 2 })));
        let shards = names(&[
            "model-00001-of-00002.safetensors",
            "model-00002-of-00002.safetensors",
        ]);
        assert_eq!(shards_among(&shards, &n), Ok(vec![4, 0]));
        // one of the two shards given: still the index (which names the other), not that
        // shard alone as the whole model
        assert_eq!(
            pick(&n[1..]),
            Ok(picked(0, 2, Weights::Sharded { index: 1 }))
        );
        // a shard left out is named
        assert_eq!(
            shards_among(&shards, &n[1..]),
            Err(names(&["model-00002-of-00002.safetensors"]))
        );
        // model.safetensors wins over an index beside it
        let mut both = n.clone();
        both.push("model.safetensors".into());
        assert_eq!(pick(&both), Ok(picked(1, 3, Weights::One(5))));
    }

    #[test]
    fn says_what_is_missing() {
        assert_eq!(
            pick(&names(&["config.json"])),
            Err(names(&["model.safetensors", "tokenizer.json"]))
        );
        let two = pick(&names(&[
            "config.json",
            "a.safetensors",
            "b.safetensors",
            "tokenizer.json",
        ]));
        assert!(two.unwrap_err()[0].contains("model.safetensors.index.json (2 .safetensors"));
        assert_eq!(pick(&[]).unwrap_err().len(), 3);
    }
}
