//! Token streams for training and validation.

use candle_core::{Device, Result, Tensor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Tokenizes every line of `text` and joins them into one stream, lines separated by the
/// id of "\n" when the tokenizer has one.
pub fn encode_lines(
    tok: &attnlab_model::Tokenizer,
    text: &str,
) -> std::result::Result<Vec<u32>, String> {
    let newline = tok.ids("\n").map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    // batch through the tokenizer for speed
    for chunk in lines.chunks(4096) {
        let encs = tok
            .inner()
            .encode_batch(chunk.to_vec(), false)
            .map_err(|e| e.to_string())?;
        for e in encs {
            out.extend_from_slice(e.get_ids());
            out.extend_from_slice(&newline);
        }
    }
    Ok(out)
}

/// `batch` random windows of `t + 1` tokens, the same for the same (seed, step).
pub fn batch(stream: &[u32], batch: usize, t: usize, seed: u64, step: usize) -> Result<Tensor> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ step as u64);
    let mut data = Vec::with_capacity(batch * (t + 1));
    for _ in 0..batch {
        let start = rng.random_range(0..stream.len() - t - 1);
        data.extend_from_slice(&stream[start..start + t + 1]);
    }
    Tensor::from_vec(data, (batch, t + 1), &Device::Cpu)
}

/// Up to `max` non-overlapping windows of `t + 1` tokens from the start of the stream.
pub fn fixed_windows(stream: &[u32], t: usize, max: usize) -> Vec<Vec<u32>> {
    stream
        .chunks_exact(t + 1)
        .take(max)
        .map(|w| w.to_vec())
        .collect()
}
