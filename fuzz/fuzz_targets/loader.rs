//! The safetensors + config loader on arbitrary bytes: an error or a model, never a panic,
//! and a model that loads has only finite weights of the shapes its config asks for.
//! Input: byte 0 picks the mode — even: a fixed valid config with the rest as the
//! safetensors file (reaches deep into the tensor checks); odd: bytes 1–2 give the length
//! of a config.json taken from the rest, the remainder is the safetensors file.
#![no_main]

use attnlab_model::weights::tensor_specs;
use attnlab_model::Model;
use libfuzzer_sys::fuzz_target;

const CONFIG: &str = r#"{"n_embd":8,"n_head":2,"n_layer":1,"n_positions":8,"vocab_size":287,"layer_norm_epsilon":1e-5,"activation_function":"gelu_new","ln_placement":"post"}"#;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    let (config, st): (&[u8], &[u8]) = if mode % 2 == 0 || rest.len() < 2 {
        (CONFIG.as_bytes(), rest)
    } else {
        let n = (u16::from_le_bytes([rest[0], rest[1]]) as usize).min(rest.len() - 2);
        (&rest[2..2 + n], &rest[2 + n..])
    };
    if let Ok(model) = Model::from_bytes(config, st) {
        let specs = tensor_specs(&model.config, model.weights.ln_f.is_some());
        let tensors = model.tensors();
        assert_eq!(tensors.len(), specs.len());
        for ((name, shape, values), (want_name, want_shape)) in tensors.iter().zip(&specs) {
            assert_eq!((name, shape), (want_name, want_shape));
            assert_eq!(values.len(), shape.iter().product::<usize>());
            assert!(values.iter().all(|v| v.is_finite()), "{name}");
        }
    }
});
