//! Writes a small random model folder (config.json, model.safetensors, tokenizer.json), the
//! same one the CLI tests use: `cargo run -p attnlab-model --example write_test_model -- DIR [pre|post]`.

use attnlab_model::testing::write_model_dir;
use attnlab_model::LnPlacement;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: write_test_model DIR [pre|post]");
        std::process::exit(2);
    };
    let ln = match args.next().as_deref() {
        Some("pre") => LnPlacement::Pre,
        None | Some("post") => LnPlacement::Post,
        Some(other) => {
            eprintln!("error: `{other}` is neither pre nor post");
            std::process::exit(2);
        }
    };
    match write_model_dir(std::path::Path::new(&dir), ln, 42) {
        Ok(m) => println!(
            "wrote a {}-layer {:?}-LN test model to {dir}",
            m.config.n_layer, ln
        ),
        Err(e) => {
            eprintln!("error: writing {dir}: {e}");
            std::process::exit(1);
        }
    }
}
