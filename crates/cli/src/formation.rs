//! How a prediction forms: `attnlab lens` (the logit lens), `attnlab flow` (raw,
//! value-weighted attention and rollout for one query) and `attnlab generate`.

use std::io::Write;

use attnlab_model::export::{self, run_tokens};
use attnlab_model::flow::{self, Method};
use attnlab_model::inspect::Inspect;
use attnlab_model::sample::Sampling;
use attnlab_model::{TokenInfo, Trace};
use serde_json::{json, Value};

fn write(out: &mut impl Write, text: &str) -> Result<(), String> {
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

pub fn lens(
    out: &mut impl Write,
    m: &impl Inspect,
    tokens: &[TokenInfo],
    tr: &Trace,
    pos: Option<usize>,
    top: usize,
    json_out: bool,
) -> Result<(), String> {
    let pos = export::position(tr, pos, "position")?;
    let lens = m.lens(tr, pos, top.max(1)).map_err(|e| e.to_string())?;
    let toks = run_tokens(tokens, tr);
    let how = export::lens_how(lens.normalised);
    if json_out {
        let v = export::lens_json(m.tokenizer(), &toks[pos].display, &lens);
        return write(
            out,
            &(serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"),
        );
    }
    let mut s = format!(
        "logit lens after token {pos} «{}» ({how})\nfinal prediction: «{}»\n\n",
        toks[pos].display,
        m.tokenizer().display_id(lens.target)
    );
    for st in &lens.stages {
        let tops: Vec<String> = st
            .top
            .iter()
            .map(|&(id, p)| format!("{} {:.1}%", m.tokenizer().display_id(id), p * 100.0))
            .collect();
        s.push_str(&format!(
            "{:<10} final {:>5.1}% (rank {:>4})  {}\n",
            export::stage_name(st.layer),
            st.target_prob * 100.0,
            st.target_rank + 1,
            tops.join(" · ")
        ));
    }
    write(out, &s)
}

pub fn flow(
    out: &mut impl Write,
    tokens: &[TokenInfo],
    tr: &Trace,
    query: Option<usize>,
    method: Method,
    json_out: bool,
) -> Result<(), String> {
    let q = export::position(tr, query, "query")?;
    let toks = run_tokens(tokens, tr);
    let strip = flow::strip(tr, q, method).map_err(|e| e.to_string())?;
    let heads: Vec<Value> = match method {
        Method::Rollout => Vec::new(),
        _ => (0..tr.dims.n_layer)
            .flat_map(|l| (0..tr.dims.n_head).map(move |h| (l, h)))
            .map(|(l, h)| {
                let row = flow::head_row(tr, l, h, q, method).map_err(|e| e.to_string())?;
                Ok(json!({"layer": l, "head": h, "row": row}))
            })
            .collect::<Result<_, String>>()?,
    };
    if json_out {
        let v = json!({
            "method": method.code(), "query": q, "query_token": toks[q].display,
            "tokens": toks.iter().map(|t| t.display.clone()).collect::<Vec<_>>(),
            "approximation": method == Method::Rollout,
            "layers": strip, "heads": heads,
        });
        return write(
            out,
            &(serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"),
        );
    }
    // csv: one line per layer and input token (heads averaged for raw and value)
    let mut s = String::from("layer,key,token,contribution\n");
    for (l, row) in strip.iter().enumerate() {
        for (j, x) in row.iter().enumerate() {
            s.push_str(&format!(
                "{l},{j},\"{}\",{x}\n",
                toks[j].display.replace('"', "\"\"")
            ));
        }
    }
    write(out, &s)
}

#[allow(clippy::too_many_arguments)]
pub fn generate_cmd(
    out: &mut impl Write,
    m: &impl Inspect,
    text: &str,
    steps: usize,
    sampling: &Sampling,
    json_out: bool,
) -> Result<(), String> {
    let ids = m.tokenizer().ids(text).map_err(|e| e.to_string())?;
    if ids.is_empty() {
        return Err("the text has no tokens: generation starts from at least one".into());
    }
    if !(1..=1024).contains(&steps) {
        return Err(format!("--steps must be 1…1024, got {steps}"));
    }
    let tty = !json_out;
    let mut shown = 0;
    let g = m
        .generate(&ids, steps, sampling, |id| {
            if tty {
                // each token as it lands
                let _ = write!(std::io::stderr(), "{}", m.tokenizer().display_id(id));
                shown += 1;
            }
        })
        .map_err(|e| e.to_string())?;
    if tty && shown > 0 {
        eprintln!();
    }
    if g.hit_context {
        eprintln!(
            "note: stopped after {} of {steps} tokens: the text fills the context of {} tokens",
            g.ids.len(),
            m.context()
        );
    }
    let mut all = ids.clone();
    all.extend(&g.ids);
    let decoded = m
        .tokenizer()
        .inner()
        .decode(&all, false)
        .map_err(|e| e.to_string())?;
    if json_out {
        let v = export::generated_json(m.tokenizer(), text, &g, &decoded, sampling);
        return write(
            out,
            &(serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"),
        );
    }
    write(out, &(decoded + "\n"))
}
