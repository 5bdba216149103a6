//! The GGUF reader and the Llama model loader on arbitrary bytes: an error or a model, never a
//! panic. A file that parses has every tensor inside it and every tensor of a read type
//! dequantizes; a model that loads runs a few tokens to logits of the right size.
//! Seeds: crates/model/tests/data/malformed-gguf (scripts/fuzz.sh copies them in).
#![no_main]

use attnlab_model::gguf::Gguf;
use attnlab_model::llama::LlamaBundle;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(g) = Gguf::parse(data) {
        for t in &g.tensors {
            assert!(t.start + t.len <= data.len(), "{}", t.name);
            if t.ty.is_read() {
                let values = g.read(data, t).expect("a read type inside the file");
                assert_eq!(values.len(), t.elements());
            }
        }
    }
    if let Ok(b) = LlamaBundle::from_gguf_bytes(data) {
        let c = &b.model.config;
        let t = c.context.min(4);
        let ids: Vec<u32> = (0..t as u32).map(|i| i % c.vocab_size as u32).collect();
        let logits = b.model.logits(&ids).expect("ids inside the vocabulary");
        assert_eq!(logits.len(), t * c.vocab_size);
    }
});
