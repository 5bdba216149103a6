//! The Trace as files: JSON (the selected heads, or every field) and CSV (one line per
//! cell). The CLI's `--format json|csv` and the app's exports write the same documents.

use std::io::{self, Write};

use serde_json::{json, Value};

use crate::cpu::MASKED;
use crate::lens::{Lens, Normalised};
use crate::roles::{Report, Role, Scores};
use crate::sample::{Generated, Sampling};
use crate::{HeadRows, TokenInfo, Tokenizer, Trace};

/// A row of the run (`None`: the last), checked against the text; `what` names it in the
/// message ("position", "query").
pub fn position(tr: &Trace, p: Option<usize>, what: &str) -> Result<usize, String> {
    let t = tr.dims.t;
    match p {
        None => Ok(t - 1),
        Some(p) if p < t => Ok(p),
        Some(p) => Err(format!(
            "{what} {p} is past the text: its tokens are 0…{} (after any dropped to fit the context)",
            t - 1
        )),
    }
}

/// The (layer, head) pairs to print.
pub struct Selection(pub Vec<(usize, usize)>);

impl Selection {
    pub fn new(tr: &Trace, layer: Option<usize>, head: Option<usize>) -> Result<Self, String> {
        let (nl, nh) = (tr.dims.n_layer, tr.dims.n_head);
        if let Some(l) = layer.filter(|&l| l >= nl) {
            return Err(format!(
                "layer {l} does not exist: the model has layers 0..{}",
                nl - 1
            ));
        }
        if let Some(h) = head.filter(|&h| h >= nh) {
            return Err(format!(
                "head {h} does not exist: the model has heads 0..{}",
                nh - 1
            ));
        }
        let layers = layer.map_or(0..nl, |l| l..l + 1);
        Ok(Selection(
            layers
                .flat_map(|l| head.map_or(0..nh, |h| h..h + 1).map(move |h| (l, h)))
                .collect(),
        ))
    }
}

/// Tokens that were run (the last T of the input).
pub fn run_tokens<'a>(tokens: &'a [TokenInfo], tr: &Trace) -> &'a [TokenInfo] {
    &tokens[tr.dropped..]
}

fn matrix(m: &[f32], t: usize, masked_as_null: bool) -> Value {
    Value::Array(
        m.chunks_exact(t)
            .map(|row| {
                Value::Array(
                    row.iter()
                        .map(|&v| {
                            if masked_as_null && v == MASKED {
                                Value::Null
                            } else {
                                json!(v)
                            }
                        })
                        .collect(),
                )
            })
            .collect(),
    )
}

pub fn tokens_json(tokens: &[TokenInfo]) -> Value {
    json!(tokens
        .iter()
        .map(|t| json!({"id": t.id, "display": t.display, "piece": t.piece, "span": [t.span.0, t.span.1], "partial": t.partial}))
        .collect::<Vec<_>>())
}

pub fn top_json(display: &dyn Fn(u32) -> String, tr: &Trace, k: usize) -> Value {
    next_json(display, &tr.top_k(tr.dims.t - 1, k))
}

/// Next tokens with their probabilities, `[{"id", "display", "prob"}]`.
pub fn next_json(display: &dyn Fn(u32) -> String, next: &[(u32, f32)]) -> Value {
    json!(next
        .iter()
        .map(|&(id, p)| json!({"id": id, "display": display(id), "prob": p}))
        .collect::<Vec<_>>())
}

/// The selected heads' matrices; masked scores are `null` (−∞).
/// `display` names a vocabulary id (the tokenizer's `display_id`).
pub fn write_json(
    out: &mut impl Write,
    display: &dyn Fn(u32) -> String,
    tokens: &[TokenInfo],
    tr: &Trace,
    sel: &Selection,
) -> io::Result<()> {
    let t = tr.dims.t;
    let heads: Vec<Value> = sel
        .0
        .iter()
        .map(|&(l, h)| {
            let hv = head_maps(tr, l, h)?;
            Ok(
                json!({"layer": l, "head": h, "scores": matrix(&hv.scores, t, false),
                   "scaled": matrix(&hv.scaled, t, false), "masked": matrix(&hv.masked, t, true),
                   "weights": matrix(&hv.weights, t, false)}),
            )
        })
        .collect::<io::Result<_>>()?;
    let doc = json!({
        "tokens": tokens_json(run_tokens(tokens, tr)), "dropped": tr.dropped, "dims": tr.dims,
        "options": tr.options, "heads": heads, "next": top_json(display, tr, 5),
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

/// One head's four maps over every row, read from the trace or computed from its q and k
/// (`Trace::head_rows`).
pub fn head_maps(tr: &Trace, layer: usize, head: usize) -> io::Result<HeadRows> {
    tr.head_rows(layer, head, 0..tr.dims.t)
        .map_err(|e| io::Error::other(e.to_string()))
}

/// Every field of the Trace (masked scores as the finite −3.4028235e38).
pub fn write_full_json(out: &mut impl Write, tokens: &[TokenInfo], tr: &Trace) -> io::Result<()> {
    let doc = json!({"tokens": tokens_json(run_tokens(tokens, tr)), "trace": tr});
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line per (layer, head, query, key).
pub fn write_csv(
    out: &mut impl Write,
    tokens: &[TokenInfo],
    tr: &Trace,
    sel: &Selection,
) -> io::Result<()> {
    let toks = run_tokens(tokens, tr);
    let t = tr.dims.t;
    writeln!(
        out,
        "layer,head,query,key,query_token,key_token,score,scaled,masked,weight"
    )?;
    for &(l, h) in &sel.0 {
        let hv = head_maps(tr, l, h)?;
        for i in 0..t {
            for j in 0..t {
                let e = i * t + j;
                let masked = if hv.masked[e] == MASKED {
                    "-inf".to_string()
                } else {
                    hv.masked[e].to_string()
                };
                writeln!(
                    out,
                    "{l},{h},{i},{j},{},{},{},{},{masked},{}",
                    csv_field(&toks[i].display),
                    csv_field(&toks[j].display),
                    hv.scores[e],
                    hv.scaled[e],
                    hv.weights[e]
                )?;
            }
        }
    }
    Ok(())
}

/// A score as JSON, with the digits of the f32 (not the f64 it widens to).
fn number(v: Option<f32>) -> Value {
    v.and_then(|v| v.to_string().parse::<f64>().ok())
        .map_or(Value::Null, Value::from)
}

/// One head's score of every role, by the role's code (null where it has none).
pub fn scores_json(s: &Scores) -> serde_json::Map<String, Value> {
    Role::ALL
        .iter()
        .map(|&role| (role.code().to_string(), number(s.get(role))))
        .collect()
}

/// Every head's role scores (`roles::measure`'s report): `attnlab heads --format json`.
pub fn roles_json(tokenizer: &Tokenizer, r: &Report) -> Value {
    let heads: Vec<Value> = r
        .scores
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "layer": i / r.n_head, "head": i % r.n_head, "scores": scores_json(s),
                "role": s.strongest().map(|(role, _)| role.code()),
            })
        })
        .collect();
    let thresholds: serde_json::Map<String, Value> = Role::ALL
        .iter()
        .map(|&role| (role.code().to_string(), number(Some(role.threshold()))))
        .collect();
    json!({
        "texts": r.texts, "truncated": r.truncated, "context": r.context,
        "probe": {
            "tokens_per_copy": r.probe.half, "seed": r.probe.seed, "clamped": r.probe.clamped,
            "tokens": r.probe.ids[..r.probe.half].iter().map(|&id| tokenizer.display_id(id)).collect::<Vec<_>>(),
        },
        "thresholds": thresholds,
        "heads": heads,
    })
}

/// How the lens reached the output head, in words.
pub fn lens_how(normalised: Normalised) -> &'static str {
    match normalised {
        Normalised::FinalLayerNorm => "every stage through the final LayerNorm, then the output head",
        Normalised::BlockOutputs => "post-LN: block outputs are already normalised and go to the output head as they are; the embedding stage is not normalised",
        Normalised::FinalRmsNorm => "every stage through the final RMSNorm, then the output head",
    }
}

/// A lens stage's name: "embedding" or "block L".
pub fn stage_name(layer: Option<usize>) -> String {
    layer.map_or("embedding".to_string(), |l| format!("block {l}"))
}

/// The logit lens after the token shown as `token`: `attnlab lens --format json`.
pub fn lens_json(tokenizer: &Tokenizer, token: &str, lens: &Lens) -> Value {
    let stages: Vec<Value> = lens
        .stages
        .iter()
        .map(|s| {
            json!({
                "stage": stage_name(s.layer), "layer": s.layer,
                "top": s.top.iter().map(|&(id, p)| json!({"id": id, "display": tokenizer.display_id(id), "prob": p})).collect::<Vec<_>>(),
                "target_prob": s.target_prob, "target_rank": s.target_rank,
            })
        })
        .collect();
    json!({
        "position": lens.position, "token": token, "normalised": lens.normalised,
        "how": lens_how(lens.normalised),
        "target": {"id": lens.target, "display": tokenizer.display_id(lens.target)},
        "stages": stages,
    })
}

/// Tokens appended to `text` (`full_text`: the whole, decoded): `attnlab generate --format
/// json`.
pub fn generated_json(
    tokenizer: &Tokenizer,
    text: &str,
    g: &Generated,
    full_text: &str,
    sampling: &Sampling,
) -> Value {
    json!({
        "text": text,
        "generated": g.ids.iter().map(|&id| json!({"id": id, "display": tokenizer.display_id(id)})).collect::<Vec<_>>(),
        "full_text": full_text, "hit_context": g.hit_context, "sampling": sampling,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{char_bpe_tokenizer_json, random_model};
    use crate::{forward, AttentionOptions, Config, LnPlacement, Tokenizer};

    fn run(text: &str) -> (Vec<TokenInfo>, Trace) {
        let tok = Tokenizer::from_bytes(char_bpe_tokenizer_json("abc,\" ").as_bytes()).unwrap();
        let config = Config {
            n_embd: 8,
            n_head: 2,
            n_layer: 1,
            n_positions: 16,
            vocab_size: tok.vocab_size(),
            layer_norm_epsilon: 1e-5,
            n_inner: None,
            activation_function: Default::default(),
            ln_placement: LnPlacement::Post,
            scale_embedding: false,
        };
        let model = random_model(&config, 7, 1.0);
        let toks = tok.encode(text).unwrap();
        let ids: Vec<u32> = toks.iter().map(|t| t.id).collect();
        let tr = forward(&model, &ids, &AttentionOptions::default()).unwrap();
        (toks, tr)
    }

    #[test]
    fn csv_has_a_line_per_cell_and_quotes_commas() {
        let (toks, tr) = run("a,\"b\" c");
        let sel = Selection::new(&tr, Some(0), None).unwrap();
        let mut out = Vec::new();
        write_csv(&mut out, &toks, &tr, &sel).unwrap();
        let text = String::from_utf8(out).unwrap();
        let t = tr.dims.t;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1 + sel.0.len() * t * t);
        assert!(text.contains("\",\""), "a comma token is quoted");
        assert!(
            text.contains("\"\"\"\""),
            "a quote token is doubled inside quotes"
        );
        // the upper triangle is masked, the weights of a row sum to 1
        assert!(lines[2].contains(",-inf,"));
        let row0: f64 = lines[1..=t]
            .iter()
            .map(|l| l.rsplit(',').next().unwrap().parse::<f64>().unwrap())
            .sum();
        assert!((row0 - 1.0).abs() < 1e-5, "{row0}");
    }

    #[test]
    fn json_marks_masked_scores_null_and_names_the_heads() {
        let (toks, tr) = run("abc");
        let sel = Selection::new(&tr, Some(0), Some(1)).unwrap();
        let mut out = Vec::new();
        write_json(&mut out, &|id| format!("#{id}"), &toks, &tr, &sel).unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        let head = &doc["heads"][0];
        assert_eq!(
            (head["layer"].as_u64(), head["head"].as_u64()),
            (Some(0), Some(1))
        );
        assert!(head["masked"][0][1].is_null());
        assert!(head["masked"][1][0].is_number());
        assert_eq!(doc["next"].as_array().unwrap().len(), 5);
        assert!(doc["next"][0]["display"].as_str().unwrap().starts_with('#'));
        assert!(Selection::new(&tr, Some(99), None).is_err());
    }
}
