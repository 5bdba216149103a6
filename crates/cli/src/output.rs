//! Text renderings of a Trace: JSON, CSV and terminal tables.

use std::io::{self, Write};

use attnlab_model::cpu::MASKED;
use attnlab_model::{Bundle, TokenInfo, Trace};
use serde_json::{json, Value};
use unicode_width::UnicodeWidthStr;

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
fn run_tokens<'a>(tokens: &'a [TokenInfo], tr: &Trace) -> &'a [TokenInfo] {
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

fn tokens_json(tokens: &[TokenInfo]) -> Value {
    json!(tokens
        .iter()
        .map(|t| json!({"id": t.id, "display": t.display, "piece": t.piece, "span": [t.span.0, t.span.1], "partial": t.partial}))
        .collect::<Vec<_>>())
}

fn top_json(bundle: &Bundle, tr: &Trace, k: usize) -> Value {
    json!(tr
        .top_k(tr.dims.t - 1, k)
        .into_iter()
        .map(|(id, p)| json!({"id": id, "display": bundle.tokenizer.display_id(id), "prob": p}))
        .collect::<Vec<_>>())
}

/// The selected heads' matrices; masked scores are `null` (−∞).
pub fn write_json(
    out: &mut impl Write,
    bundle: &Bundle,
    tokens: &[TokenInfo],
    tr: &Trace,
    sel: &Selection,
) -> io::Result<()> {
    let t = tr.dims.t;
    let heads: Vec<Value> = sel
        .0
        .iter()
        .map(|&(l, h)| {
            let hv = tr.head(l, h);
            json!({"layer": l, "head": h, "scores": matrix(hv.scores, t, false),
                   "scaled": matrix(hv.scaled, t, false), "masked": matrix(hv.masked, t, true),
                   "weights": matrix(hv.weights, t, false)})
        })
        .collect();
    let doc = json!({
        "tokens": tokens_json(run_tokens(tokens, tr)), "dropped": tr.dropped, "dims": tr.dims,
        "options": tr.options, "heads": heads, "next": top_json(bundle, tr, 5),
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
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
        let hv = tr.head(l, h);
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

fn pad(s: &str, width: usize) -> String {
    let w = UnicodeWidthStr::width(s);
    format!("{s}{}", " ".repeat(width.saturating_sub(w)))
}

fn cut(s: &str, width: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if UnicodeWidthStr::width(format!("{out}{c}").as_str()) > width {
            out.push('…');
            break;
        }
        out.push(c);
    }
    out
}

/// Tokens, then one weight matrix per selected head with row sums, then the top predictions.
pub fn write_table(
    out: &mut impl Write,
    bundle: &Bundle,
    tokens: &[TokenInfo],
    tr: &Trace,
    sel: &Selection,
) -> io::Result<()> {
    let toks = run_tokens(tokens, tr);
    let t = tr.dims.t;
    if tr.dropped > 0 {
        writeln!(
            out,
            "note: the first {} tokens were dropped to fit the context of {t}",
            tr.dropped
        )?;
    }
    writeln!(out, "tokens ({t}):")?;
    for (i, tok) in toks.iter().enumerate() {
        writeln!(
            out,
            "  {i:>3}  {} id {:<6} chars {}..{}",
            pad(&tok.display, 14),
            tok.id,
            tok.span.0,
            tok.span.1
        )?;
    }
    let labels: Vec<String> = toks.iter().map(|t| cut(&t.display, 10)).collect();
    let lw = labels
        .iter()
        .map(|l| UnicodeWidthStr::width(l.as_str()))
        .max()
        .unwrap_or(1)
        .max(5);
    let o = &tr.options;
    for &(l, h) in &sel.0 {
        writeln!(
            out,
            "\nlayer {l} head {h}: attention weights (rows: queries, columns: keys; scale {}, τ = {}, mask {}{})",
            if o.scale { "1/√d_k" } else { "off" },
            o.temperature,
            if o.causal_mask { "on" } else { "off" },
            if o.ablate.contains(&(l, h)) { ", this head is ablated" } else { "" }
        )?;
        let colw = lw.max(6);
        write!(out, "{}", pad("", lw + 2))?;
        for lab in &labels {
            write!(out, " {}", pad(lab, colw))?;
        }
        writeln!(out, " {}", pad("Σ", 6))?;
        let w = tr.head(l, h).weights;
        for (i, lab) in labels.iter().enumerate() {
            write!(out, "{}  ", pad(lab, lw))?;
            let row = &w[i * t..(i + 1) * t];
            for &v in row {
                write!(out, " {}", pad(&format!("{v:.4}"), colw))?;
            }
            writeln!(out, " {:.4}", row.iter().map(|&v| v as f64).sum::<f64>())?;
        }
    }
    writeln!(
        out,
        "\nnext token after “{}”:",
        toks.last().map_or("", |t| t.display.as_str())
    )?;
    for (id, p) in tr.top_k(t - 1, 5) {
        writeln!(
            out,
            "  {:>7.3}%  {}",
            p * 100.0,
            bundle.tokenizer.display_id(id)
        )?;
    }
    Ok(())
}

/// The top `k` next tokens after the last position.
pub fn write_predictions(
    out: &mut impl Write,
    bundle: &Bundle,
    tokens: &[TokenInfo],
    tr: &Trace,
    k: usize,
    json: bool,
) -> io::Result<()> {
    if json {
        let doc = json!({"tokens": tokens_json(run_tokens(tokens, tr)), "dropped": tr.dropped, "next": top_json(bundle, tr, k)});
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        return writeln!(out);
    }
    for (rank, (id, p)) in tr.top_k(tr.dims.t - 1, k).into_iter().enumerate() {
        writeln!(
            out,
            "{:>3}. {:>7.3}%  {:<16} id {id}",
            rank + 1,
            p * 100.0,
            bundle.tokenizer.display_id(id)
        )?;
    }
    Ok(())
}
