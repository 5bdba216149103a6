//! A model kept on this device, only when the user asks ("keep the model I open next"): the
//! files it was read from — the user's own (GPT-2 layout, a GGUF file, a Hugging Face folder
//! with its shards), a served model's GGUF file, a Hub model's files — in the browser's Cache
//! API under a cache of its own (`attnlab-kept-model`), apart from the offline copy of the
//! app (sw.js never deletes it, and never serves it to anyone but this page). One model is
//! kept at a time; "forget" deletes it.
//!
//! A manifest (`kept-model/manifest`, JSON) names the model, where it came from, its files'
//! names and its size; it is written after every file, so a model is kept whole or not at all,
//! and a model kept earlier stays until the new one is whole. A kept model is read back as
//! `File`s and opened as files the user gave are.

use js_sys::{Array, Promise, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, Cache, File, Response};

use crate::dom::js_err;

const CACHE: &str = "attnlab-kept-model";
const MANIFEST: &str = "kept-model/manifest";
/// A GPT-2-layout model kept before there was a manifest: its three files, then its name and
/// size (written last).
const LEGACY: [(&str, &str); 3] = [
    ("kept-model/config.json", "config.json"),
    ("kept-model/model.safetensors", "model.safetensors"),
    ("kept-model/tokenizer.json", "tokenizer.json"),
];
const LEGACY_NAME: &str = "kept-model/name";
const LEGACY_SIZE: &str = "kept-model/size";

/// The kept model's name (its files' names, or the model's), where it came from (the URL's
/// `model=` code of a served or Hub model) and its size in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptInfo {
    pub name: String,
    pub source: Option<String>,
    pub bytes: u64,
}

/// What the manifest says.
#[derive(Serialize, Deserialize)]
struct Manifest {
    name: String,
    #[serde(default)]
    source: Option<String>,
    bytes: u64,
    /// Which keys hold the files: `kept-model/{generation}/{i}`.
    generation: String,
    files: Vec<String>,
}

impl Manifest {
    fn key(&self, i: usize) -> String {
        file_key(&self.generation, i)
    }

    fn info(&self) -> KeptInfo {
        KeptInfo {
            name: self.name.clone(),
            source: self.source.clone(),
            bytes: self.bytes,
        }
    }
}

fn file_key(generation: &str, i: usize) -> String {
    format!("kept-model/{generation}/{i}")
}

/// A size as people read it: "512 B", "7.3 kB", "9.1 MB".
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b} B"),
        b if b < 1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{:.1} MB", b as f64 / 1e6),
    }
}

async fn wait(p: Promise) -> Result<JsValue, String> {
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

async fn response(cache: &Cache, key: &str) -> Result<Option<Response>, String> {
    let hit = wait(cache.match_with_str(key)).await?;
    Ok(hit.dyn_into::<Response>().ok())
}

async fn read(cache: &Cache, key: &str) -> Result<Option<Vec<u8>>, String> {
    let Some(resp) = response(cache, key).await? else {
        return Ok(None);
    };
    let buf = wait(resp.array_buffer().map_err(js_err)?).await?;
    Ok(Some(Uint8Array::new(&buf).to_vec()))
}

async fn put(cache: &Cache, key: &str, resp: &Response) -> Result<(), String> {
    wait(cache.put_with_str(key, resp)).await.map(|_| ())
}

async fn write(cache: &Cache, key: &str, bytes: &[u8]) -> Result<(), String> {
    let body = Uint8Array::from(bytes);
    let resp = Response::new_with_opt_buffer_source(Some(&body)).map_err(js_err)?;
    put(cache, key, &resp).await
}

/// A file of a model to keep: its name and its bytes, as a `Blob` (a `File` the user gave is
/// one, and is not read to be kept).
pub struct KeepFile {
    pub name: String,
    pub blob: Blob,
}

impl KeepFile {
    /// A file the user gave, kept as it is (not read).
    pub fn from_file(file: File) -> KeepFile {
        KeepFile {
            name: file.name(),
            blob: file.into(),
        }
    }

    /// Bytes in wasm memory, copied into a blob.
    pub fn from_bytes(name: &str, bytes: &[u8]) -> Result<KeepFile, String> {
        KeepFile::from_js(name, &Uint8Array::from(bytes))
    }

    /// Bytes outside wasm memory, copied into a blob (so that they may be transferred after).
    pub fn from_js(name: &str, bytes: &Uint8Array) -> Result<KeepFile, String> {
        let blob = Blob::new_with_u8_array_sequence(&Array::of1(bytes)).map_err(js_err)?;
        Ok(KeepFile {
            name: name.to_string(),
            blob,
        })
    }
}

/// Keeps `files` as the model named `name` (from `source`, the URL's code of a served or Hub
/// model), replacing the one kept before once all of them are kept.
pub async fn keep(
    name: &str,
    source: Option<String>,
    files: &[KeepFile],
) -> Result<KeptInfo, String> {
    let cache = open().await?;
    let before = manifest(&cache).await.ok().flatten();
    let generation = format!("{}", js_sys::Date::now() as u64);
    // never half a model: on any error the new files go, the model kept before stays
    let drop_new = |n: usize| {
        let (cache, generation) = (cache.clone(), generation.clone());
        async move {
            for j in 0..n {
                let _ = wait(cache.delete_with_str(&file_key(&generation, j))).await;
            }
        }
    };
    for (i, f) in files.iter().enumerate() {
        let written = match Response::new_with_opt_blob(Some(&f.blob)) {
            Ok(resp) => put(&cache, &file_key(&generation, i), &resp).await,
            Err(e) => Err(js_err(e)),
        };
        if let Err(e) = written {
            drop_new(i + 1).await;
            return Err(e);
        }
    }
    let manifest = Manifest {
        name: name.to_string(),
        source,
        bytes: files.iter().map(|f| f.blob.size() as u64).sum(),
        generation: generation.clone(),
        files: files.iter().map(|f| f.name.clone()).collect(),
    };
    let json = serde_json::to_vec(&manifest).map_err(|e| e.to_string())?;
    if let Err(e) = write(&cache, MANIFEST, &json).await {
        drop_new(files.len()).await;
        return Err(e);
    }
    // the files of the model kept before (only those: another keep's are its own)
    if let Some(old) = before.filter(|old| old.generation != generation) {
        let keys: Vec<String> = if old.generation.is_empty() {
            let legacy = LEGACY.iter().map(|(k, _)| *k);
            legacy
                .chain([LEGACY_NAME, LEGACY_SIZE])
                .map(str::to_string)
                .collect()
        } else {
            (0..old.files.len()).map(|i| old.key(i)).collect()
        };
        for key in keys {
            let _ = wait(cache.delete_with_str(&key)).await;
        }
    }
    Ok(manifest.info())
}

/// The manifest, or one made up for a model kept before there were manifests.
async fn manifest(cache: &Cache) -> Result<Option<Manifest>, String> {
    if let Some(json) = read(cache, MANIFEST).await? {
        let m =
            serde_json::from_slice(&json).map_err(|e| format!("the kept model's manifest: {e}"))?;
        return Ok(Some(m));
    }
    let Some(name) = read(cache, LEGACY_NAME).await? else {
        return Ok(None);
    };
    let bytes = read(cache, LEGACY_SIZE)
        .await?
        .and_then(|s| String::from_utf8_lossy(&s).parse().ok())
        .unwrap_or(0);
    Ok(Some(Manifest {
        name: String::from_utf8_lossy(&name).into_owned(),
        source: None,
        bytes,
        generation: String::new(),
        files: LEGACY.iter().map(|(_, n)| n.to_string()).collect(),
    }))
}

/// The kept model, if there is one (and all of it): its files, to be opened as the user's
/// files are, and what it is.
pub async fn load() -> Result<Option<(Vec<File>, KeptInfo)>, String> {
    if !exists().await? {
        return Ok(None);
    }
    let cache = open().await?;
    let Some(m) = manifest(&cache).await? else {
        return Ok(None);
    };
    let mut files = Vec::new();
    for (i, name) in m.files.iter().enumerate() {
        let key = if m.generation.is_empty() {
            match LEGACY.get(i) {
                Some((key, _)) => key.to_string(),
                None => return Ok(None),
            }
        } else {
            m.key(i)
        };
        let Some(resp) = response(&cache, &key).await? else {
            return Ok(None);
        };
        let blob: Blob = wait(resp.blob().map_err(js_err)?)
            .await?
            .dyn_into()
            .map_err(|_| "not a blob".to_string())?;
        let file = File::new_with_blob_sequence(&Array::of1(&blob), name).map_err(js_err)?;
        files.push(file);
    }
    Ok(Some((files, m.info())))
}

/// What is kept, from its manifest (the files are not read).
pub async fn info() -> Option<KeptInfo> {
    if !exists().await.ok()? {
        return None;
    }
    let cache = open().await.ok()?;
    manifest(&cache).await.ok()?.map(|m| m.info())
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
