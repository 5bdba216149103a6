//! Training of attnlab's bundled model: tokenizer, GPT in candle, AdamW, data, analysis.

pub mod adamw;
pub mod analysis;
pub mod card;
pub mod data;
pub mod gpt;
pub mod plot;
pub mod run;
pub mod tokenizer;
