//! A model of the user's own kept on this device, only when they ask ("keep this model on
//! this device"): its three files in the browser's Cache API under a cache of its own
//! (`attnlab-kept-model`), apart from the offline copy of the app (sw.js never deletes it,
//! and never serves it to anyone but this page). One model is kept at a time; "forget"
//! deletes it.

use js_sys::{Promise, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

use crate::dom::js_err;
use crate::loader::ModelBytes;

const CACHE: &str = "attnlab-kept-model";
const FILES: [&str; 3] = [
    "kept-model/config.json",
    "kept-model/model.safetensors",
    "kept-model/tokenizer.json",
];
// written last: a kept model is whole once it has a name
const NAME: &str = "kept-model/name";
const SIZE: &str = "kept-model/size";

/// The kept model's name (its three files' names) and size in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptInfo {
    pub name: String,
    pub bytes: u64,
}

/// A size as people read it: "512 B", "7.3 kB", "9.1 MB".
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

async fn wait(p: Promise) -> Result<wasm_bindgen::JsValue, String> {
    JsFuture::from(p).await.map_err(js_err)
}

fn storage() -> Result<web_sys::CacheStorage, String> {
    let window = web_sys::window().ok_or("no window")?;
    // only secure pages (https://, localhost) have one; elsewhere `caches` is undefined
    let none = || "this page keeps no files: the Cache API needs https:// or localhost".to_string();
    if crate::dom::get(&window, "caches").is_undefined() {
        return Err(none());
    }
    window.caches().map_err(|_| none())
}

/// Whether a model is kept (without making the cache, as opening it would).
async fn exists() -> Result<bool, String> {
    Ok(wait(storage()?.has(CACHE)).await?.as_bool() == Some(true))
}

async fn open() -> Result<Cache, String> {
    wait(storage()?.open(CACHE))
        .await?
        .dyn_into::<Cache>()
        .map_err(|_| "not a cache".to_string())
}

async fn read(cache: &Cache, key: &str) -> Result<Option<Vec<u8>>, String> {
    let hit = wait(cache.match_with_str(key)).await?;
    let Ok(resp) = hit.dyn_into::<Response>() else {
        return Ok(None);
    };
    let buf = wait(resp.array_buffer().map_err(js_err)?).await?;
    Ok(Some(Uint8Array::new(&buf).to_vec()))
}

async fn write(cache: &Cache, key: &str, bytes: &[u8]) -> Result<(), String> {
    let body = Uint8Array::from(bytes);
    let resp = Response::new_with_opt_buffer_source(Some(&body)).map_err(js_err)?;
    wait(cache.put_with_str(key, &resp)).await.map(|_| ())
}

/// Keeps `bytes` as the model named `name`, replacing any kept before.
pub async fn keep(name: &str, bytes: &ModelBytes) -> Result<KeptInfo, String> {
    let cache = open().await?;
    let parts = [&bytes.config, &bytes.weights, &bytes.tokenizer];
    for (key, b) in FILES.iter().zip(parts) {
        if let Err(e) = write(&cache, key, b).await {
            let _ = forget().await; // never half a model
            return Err(e);
        }
    }
    let bytes: u64 = parts.iter().map(|b| b.len() as u64).sum();
    write(&cache, SIZE, bytes.to_string().as_bytes()).await?;
    write(&cache, NAME, name.as_bytes()).await?;
    Ok(KeptInfo {
        name: name.to_string(),
        bytes,
    })
}

/// The kept model, if there is one (and all of it).
pub async fn load() -> Result<Option<(ModelBytes, String)>, String> {
    if !exists().await? {
        return Ok(None);
    }
    let cache = open().await?;
    let Some(name) = read(&cache, NAME).await? else {
        return Ok(None);
    };
    let mut files = Vec::new();
    for key in FILES {
        match read(&cache, key).await? {
            Some(b) => files.push(b),
            None => return Ok(None),
        }
    }
    let [config, weights, tokenizer]: [Vec<u8>; 3] =
        files.try_into().map_err(|_| "three files".to_string())?;
    Ok(Some((
        ModelBytes {
            config,
            weights,
            tokenizer,
        },
        String::from_utf8_lossy(&name).into_owned(),
    )))
}

/// What is kept, from its name and size records (the files are not read).
pub async fn info() -> Option<KeptInfo> {
    if !exists().await.ok()? {
        return None;
    }
    let cache = open().await.ok()?;
    let name = read(&cache, NAME).await.ok()??;
    let size = read(&cache, SIZE).await.ok()??;
    let bytes = String::from_utf8_lossy(&size).parse().ok()?;
    Some(KeptInfo {
        name: String::from_utf8_lossy(&name).into_owned(),
        bytes,
    })
}

/// Deletes the kept model.
pub async fn forget() -> Result<(), String> {
    wait(storage()?.delete(CACHE)).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_in_their_unit() {
        assert_eq!(super::size(512), "512 B");
        assert_eq!(super::size(7_300), "7.3 kB");
        assert_eq!(super::size(9_100_000), "9.1 MB");
    }
}
