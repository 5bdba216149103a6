//! Files in and out: downloads (a URL or bytes), reading a file with progress, and the files
//! of a picker or a drop (folders walked).

use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Makes the browser save `url` (a `data:` or `blob:` URL) as `name`: a click on a
/// temporary `<a download>`. Nothing leaves the browser.
pub fn download_url(name: &str, url: &str) -> Result<(), String> {
    let doc = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("no document")?;
    let a: web_sys::HtmlAnchorElement = doc
        .create_element("a")
        .map_err(|e| format!("{e:?}"))?
        .dyn_into()
        .map_err(|_| "not an anchor")?;
    a.set_href(url);
    a.set_download(name);
    a.set_hidden(true);
    let body = doc.body().ok_or("no body")?;
    let _ = body.append_child(&a);
    a.click();
    let _ = body.remove_child(&a);
    Ok(())
}

/// Saves `bytes` as a file `name` of type `mime`.
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts)
        .map_err(|e| format!("{e:?}"))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| format!("{e:?}"))?;
    let result = download_url(name, &url);
    // the click has started the download; the URL may go once this task ends
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(w) = web_sys::window() {
        let _ =
            w.set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000);
    }
    result
}

/// Reads a user's file in 8 MB slices, handing each slice to `sink` (the page stays
/// responsive between slices).
async fn read_slices(
    file: &web_sys::File,
    mut sink: impl FnMut(&Uint8Array),
) -> Result<(), String> {
    const CHUNK: f64 = 8.0 * 1024.0 * 1024.0;
    let size = file.size();
    let mut at = 0.0;
    while at < size {
        let end = (at + CHUNK).min(size);
        let part = file
            .slice_with_f64_and_f64(at, end)
            .map_err(|e| format!("{}: {e:?}", file.name()))?;
        let buf = JsFuture::from(part.array_buffer())
            .await
            .map_err(|e| format!("{}: {e:?}", file.name()))?;
        sink(&Uint8Array::new(&buf));
        at = end;
    }
    Ok(())
}

/// Reads a user's file into wasm memory, reporting the bytes read so far after each slice.
pub async fn read_file(
    file: &web_sys::File,
    mut progress: impl FnMut(u64),
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(file.size() as usize);
    read_slices(file, |bytes| {
        let start = out.len();
        out.resize(start + bytes.length() as usize, 0);
        bytes.copy_to(&mut out[start..]);
        progress(out.len() as u64);
    })
    .await?;
    Ok(out)
}

/// Reads a user's file outside wasm memory (a model's weights, for the CPU worker),
/// reporting the bytes read so far after each slice.
pub async fn read_file_js(
    file: &web_sys::File,
    mut progress: impl FnMut(u64),
) -> Result<Uint8Array, String> {
    let size = file.size();
    if size > u32::MAX as f64 {
        return Err(format!("{}: {size} bytes is too large", file.name()));
    }
    let out = Uint8Array::new_with_length(size as u32);
    let mut at = 0u32;
    read_slices(file, |bytes| {
        let n = bytes.length().min(out.length() - at);
        out.set(&bytes.subarray(0, n), at);
        at += n;
        progress(at as u64);
    })
    .await?;
    Ok(out)
}

/// The files of a file input or a drop, in order (none for `None`).
pub fn file_list(list: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    list.map(|l| (0..l.length()).filter_map(|i| l.get(i)).collect())
        .unwrap_or_default()
}

/// What was dropped: the entries (files and folders) of a drop's items, taken while the drop
/// event lasts (they are gone after it), or its plain files where the browser gives no entries.
pub enum Dropped {
    Entries(Vec<web_sys::FileSystemEntry>),
    Files(Vec<web_sys::File>),
}

pub fn dropped(dt: &web_sys::DataTransfer) -> Dropped {
    let items = dt.items();
    let entries: Vec<web_sys::FileSystemEntry> = (0..items.length())
        .filter_map(|i| items.get(i))
        .filter(|it| it.kind() == "file")
        .filter_map(|it| it.webkit_get_as_entry().ok().flatten())
        .collect();
    if !entries.is_empty() {
        return Dropped::Entries(entries);
    }
    Dropped::Files(file_list(dt.files()))
}

/// The files under dropped entries: files as they are, folders read one level deep (a model
/// folder holds its three files at the top).
pub async fn entry_files(
    entries: Vec<web_sys::FileSystemEntry>,
) -> Result<Vec<web_sys::File>, String> {
    let mut out = Vec::new();
    for entry in entries {
        if entry.is_directory() {
            let dir: web_sys::FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            loop {
                // readEntries gives batches until an empty one
                let batch = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
                    if let Err(e) =
                        reader.read_entries_with_callback_and_callback(&resolve, &reject)
                    {
                        let _ = reject.call1(&JsValue::NULL, &e);
                    }
                }))
                .await
                .map_err(|e| format!("{e:?}"))?;
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                for e in batch.iter() {
                    let e: web_sys::FileSystemEntry = e.unchecked_into();
                    if e.is_file() {
                        out.push(entry_file(e.unchecked_into()).await?);
                    }
                }
            }
        } else if entry.is_file() {
            out.push(entry_file(entry.unchecked_into()).await?);
        }
    }
    Ok(out)
}

async fn entry_file(entry: web_sys::FileSystemFileEntry) -> Result<web_sys::File, String> {
    let file = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
        entry.file_with_callback_and_callback(&resolve, &reject);
    }))
    .await
    .map_err(|e| format!("{e:?}"))?;
    Ok(file.unchecked_into())
}
