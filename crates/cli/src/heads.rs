//! `attnlab heads`: every head's role scores (attnlab_model::roles) for a text or averaged
//! over a corpus, plus the repeated random-token probe; `attnlab thumbnails`: every head's
//! weights pooled small, and its text roles read from the same rows, as the page's heads grid
//! and roles table of a long text show them.

use std::io::{IsTerminal, Write};
use std::path::Path;

use attnlab_model::export;
use attnlab_model::roles::{self, Probe, Subject};
use attnlab_model::AttentionOptions;
use serde_json::{json, Value};

/// `attnlab thumbnails`: the heads (all, one layer's, one head's) pooled to at most `side` ×
/// `side` cells, as JSON.
pub fn thumbnails(
    out: &mut impl Write,
    tr: &attnlab_model::Trace,
    side: usize,
    layer: Option<usize>,
    head: Option<usize>,
) -> Result<(), String> {
    let d = tr.dims;
    if let Some(l) = layer.filter(|&l| l >= d.n_layer) {
        return Err(format!("no layer {l}: the model has {}", d.n_layer));
    }
    if let Some(h) = head.filter(|&h| h >= d.n_head) {
        return Err(format!("no head {h}: the model has {} per layer", d.n_head));
    }
    let th = tr.thumbnails(side).map_err(|e| e.to_string())?;
    let scores = roles::pooled_scores(&th);
    let heads: Vec<Value> = (0..d.n_layer)
        .filter(|&l| layer.is_none_or(|x| x == l))
        .flat_map(|l| (0..d.n_head).map(move |h| (l, h)))
        .filter(|&(_, h)| head.is_none_or(|x| x == h))
        .map(|(l, h)| {
            let rows: Vec<&[f32]> = th.head(l, h).chunks(th.cells).collect();
            // the text roles read from the same rows, as the page's roles table shows them
            let s = scores[l * d.n_head + h];
            let text_roles: serde_json::Map<String, Value> = roles::TEXT_ROLES
                .iter()
                .map(|&r| (r.code().to_string(), json!(s.get(r))))
                .collect();
            json!({"layer": l, "head": h, "weights": rows, "roles": text_roles})
        })
        .collect();
    let doc = json!({"tokens": d.t, "span": th.span, "cells": th.cells, "heads": heads});
    let text = serde_json::to_string(&doc).map_err(|e| e.to_string())? + "\n";
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// The lines of a corpus file: UTF-8 text, at least one non-empty line.
pub fn read_corpus(path: &Path) -> Result<Vec<String>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = match String::from_utf8(bytes) {
        Ok(t) if !t.contains('\0') => t,
        _ => {
            return Err(format!(
                "{} is not UTF-8 text (a binary file?); --corpus takes one text per line",
                path.display()
            ))
        }
    };
    let lines: Vec<String> = roles::corpus_lines(&text)
        .into_iter()
        .map(String::from)
        .collect();
    if lines.is_empty() {
        return Err(format!(
            "{} has no text: the corpus is empty",
            path.display()
        ));
    }
    Ok(lines)
}

/// The texts `heads` reads the text roles from: a corpus file's lines, one text (`-`: standard
/// input), or none (the probe's roles only).
pub fn texts(
    text: Option<String>,
    corpus: Option<std::path::PathBuf>,
) -> Result<Vec<String>, String> {
    Ok(match (text, corpus) {
        (_, Some(path)) => read_corpus(&path)?,
        (Some(text), None) => vec![crate::read_text(text)?],
        (None, None) => Vec::new(),
    })
}

/// A progress bar on stderr for long corpora (a redrawn line on a terminal, a line per
/// tenth otherwise).
fn progress(done: usize, total: usize) {
    if total < 20 {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err.is_terminal() {
        let w = 30 * done / total;
        let _ = write!(
            err,
            "\r[{}{}] {done}/{total} lines",
            "#".repeat(w),
            ".".repeat(30 - w)
        );
        if done == total {
            let _ = writeln!(err);
        }
    } else if done * 10 / total != (done - 1) * 10 / total {
        let _ = writeln!(err, "{done}/{total} lines");
    }
}

pub fn run(
    out: &mut impl Write,
    subject: &impl Subject,
    texts: &[String],
    probe_len: usize,
    seed: u64,
    opts: &AttentionOptions,
    json_out: bool,
) -> Result<(), String> {
    let context = subject.context();
    let probe = Probe::new(subject.tokenizer(), probe_len, seed, context);
    if let Some(why) = &probe.clamped {
        eprintln!("note: {why}");
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let report =
        roles::measure(subject, &refs, &probe, opts, progress).map_err(|e| e.to_string())?;
    if report.truncated > 0 {
        eprintln!(
            "note: {} of {} texts were longer than the context: their start was dropped, keeping the last {context} tokens (as the page does)",
            report.truncated,
            texts.len()
        );
    }
    if !texts.is_empty() && report.texts == 0 {
        eprintln!("note: no text has two tokens or more; only the probe's roles are shown");
    }
    let text = if json_out {
        serde_json::to_string_pretty(&export::roles_json(subject.tokenizer(), &report))
            .map_err(|e| e.to_string())?
            + "\n"
    } else {
        roles::markdown_table(&report.scores, report.n_head)
    };
    match out.write_all(text.as_bytes()) {
        // a reader that closed the pipe early (`attnlab heads | head`) is not an error
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}
