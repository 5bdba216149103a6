//! Terminal renderings of a Trace (JSON and CSV live in `attnlab_model::export`).

use std::io::{self, Write};

use attnlab_model::export::{self, run_tokens, tokens_json, top_json, Selection};
use attnlab_model::inspect::Inspect;
use attnlab_model::{TokenInfo, Trace};
use serde_json::json;
use unicode_width::UnicodeWidthStr;

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
    model: &impl Inspect,
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
        let hv = export::head_maps(tr, l, h)?;
        let w = &hv.weights;
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
            model.tokenizer().display_id(id)
        )?;
    }
    Ok(())
}

/// The top `k` next tokens after the last position.
pub fn write_predictions(
    out: &mut impl Write,
    model: &impl Inspect,
    tokens: &[TokenInfo],
    tr: &Trace,
    k: usize,
    json: bool,
) -> io::Result<()> {
    if json {
        let doc = json!({"tokens": tokens_json(run_tokens(tokens, tr)), "dropped": tr.dropped, "next": top_json(&|id| model.tokenizer().display_id(id), tr, k)});
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        return writeln!(out);
    }
    write_top(
        out,
        &|id| model.tokenizer().display_id(id),
        &tr.top_k(tr.dims.t - 1, k),
    )
}

/// Ranked next tokens as lines: rank, probability, the token, its id.
pub fn write_top(
    out: &mut (impl Write + ?Sized),
    display: &dyn Fn(u32) -> String,
    top: &[(u32, f32)],
) -> io::Result<()> {
    for (rank, &(id, p)) in top.iter().enumerate() {
        writeln!(
            out,
            "{:>3}. {:>7.3}%  {:<16} id {id}",
            rank + 1,
            p * 100.0,
            display(id)
        )?;
    }
    Ok(())
}
