//! Which of the files a user dropped or picked make a model: one `.gguf` file, or
//! config.json, tokenizer.json and one `.safetensors` (model.safetensors preferred). Pure, so
//! it is tested natively.

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

/// Indices of (config.json, model.safetensors, tokenizer.json) in `names`, or the names of
/// what is missing (and why, for several .safetensors files).
pub fn pick(names: &[String]) -> Result<[usize; 3], Vec<String>> {
    let base = |n: &str| {
        n.rsplit(['/', '\\'])
            .next()
            .unwrap_or(n)
            .to_ascii_lowercase()
    };
    let find = |want: &str| names.iter().position(|n| base(n) == want);
    let config = find("config.json");
    let tokenizer = find("tokenizer.json");
    let st: Vec<usize> = (0..names.len())
        .filter(|&i| base(&names[i]).ends_with(".safetensors"))
        .collect();
    let weights = find("model.safetensors").or(match st.as_slice() {
        [one] => Some(*one),
        _ => None,
    });
    let mut missing = Vec::new();
    if config.is_none() {
        missing.push("config.json".to_string());
    }
    if weights.is_none() {
        missing.push(if st.len() > 1 {
            format!(
                "model.safetensors ({} .safetensors files, sharded models are not supported)",
                st.len()
            )
        } else {
            "model.safetensors".to_string()
        });
    }
    if tokenizer.is_none() {
        missing.push("tokenizer.json".to_string());
    }
    match (config, weights, tokenizer) {
        (Some(c), Some(w), Some(t)) => Ok([c, w, t]),
        _ => Err(missing),
    }
}

#[cfg(test)]
mod tests {
    use super::{pick, pick_gguf};

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
        assert_eq!(pick(&n), Ok([3, 2, 0]));
        // another name for the weights is fine when it is the only one
        assert_eq!(
            pick(&names(&["Config.JSON", "w.safetensors", "tokenizer.json"])),
            Ok([0, 1, 2])
        );
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
        assert!(two.unwrap_err()[0].contains("sharded"));
        assert_eq!(pick(&[]).unwrap_err().len(), 3);
    }
}
