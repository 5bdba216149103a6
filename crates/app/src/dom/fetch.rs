//! Fetching with progress: a response and its size, and its body read chunk by chunk.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{ReadableStreamDefaultReader, Response};

use super::js::js_err;

/// Starts fetching `url`; returns the response and its size when the server says it (and
/// the body is not compressed, where the header would count compressed bytes).
pub async fn open(url: &str) -> Result<(Response, Option<u64>), String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp: Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("{url}: {}", js_err(e)))?
        .dyn_into()
        .map_err(|_| format!("{url}: not a response"))?;
    if !resp.ok() {
        return Err(format!(
            "{url}: HTTP {} {}",
            resp.status(),
            resp.status_text()
        ));
    }
    let headers = resp.headers();
    let encoded = headers
        .get("content-encoding")
        .ok()
        .flatten()
        .is_some_and(|e| e != "identity");
    let size = headers
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.parse().ok())
        .filter(|_| !encoded);
    Ok((resp, size))
}

/// Reads a response's body, handing each chunk to `sink`.
async fn read_chunks(
    url: &str,
    resp: Response,
    mut sink: impl FnMut(&Uint8Array) -> Result<(), String>,
) -> Result<(), String> {
    let body = resp.body().ok_or_else(|| format!("{url}: empty body"))?;
    let reader: ReadableStreamDefaultReader = body
        .get_reader()
        .dyn_into()
        .map_err(|_| format!("{url}: cannot read the body"))?;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| format!("{url}: {}", js_err(e)))?;
        let done = Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true);
        if done {
            return Ok(());
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(js_err)?;
        let bytes: Uint8Array = value
            .dyn_into()
            .map_err(|_| format!("{url}: unexpected chunk"))?;
        sink(&bytes)?;
    }
}

/// Reads a response's body into wasm memory, calling `progress(bytes)` after every chunk.
pub async fn read_body(
    url: &str,
    resp: Response,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    read_chunks(url, resp, |bytes| {
        let start = out.len();
        out.resize(start + bytes.length() as usize, 0);
        bytes.copy_to(&mut out[start..]);
        progress(out.len() as u64);
        Ok(())
    })
    .await?;
    Ok(out)
}

/// Reads a response's body of `size` bytes outside wasm memory (a model's weights, for the
/// CPU worker), calling `progress(bytes)` after every chunk.
pub async fn read_body_js(
    url: &str,
    resp: Response,
    size: u64,
    mut progress: impl FnMut(u64),
) -> Result<Uint8Array, String> {
    let len = u32::try_from(size).map_err(|_| format!("{url}: {size} bytes is too large"))?;
    let out = Uint8Array::new_with_length(len);
    let mut at = 0u32;
    read_chunks(url, resp, |bytes| {
        let end = at
            .checked_add(bytes.length())
            .filter(|&e| e <= len)
            .ok_or_else(|| format!("{url}: longer than the {size} bytes the server said"))?;
        out.set(bytes, at);
        at = end;
        progress(at as u64);
        Ok(())
    })
    .await?;
    if at != len {
        return Err(format!("{url}: {at} bytes of the {size} the server said"));
    }
    Ok(out)
}
