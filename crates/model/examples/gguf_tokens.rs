//! Prints the ids a GGUF file's tokenizer gives each argument (the tokenizer attnlab builds
//! from the file's metadata): `cargo run -p attnlab-model --example gguf_tokens -- FILE TEXT…`.

use attnlab_model::gguf::{tokenizer::tokenizer_json, Gguf};
use attnlab_model::Tokenizer;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("a .gguf file");
    let bytes = std::fs::read(&path).expect("readable");
    let g = Gguf::parse(&bytes).expect("a GGUF file");
    let json = tokenizer_json(&g).expect("a tokenizer");
    let tok = Tokenizer::from_bytes(json.as_bytes()).expect("loadable");
    for text in args {
        println!("{text:?} → {:?}", tok.ids(&text).expect("encodable"));
    }
}
