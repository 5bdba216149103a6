// attnlab's service worker: keeps this build's files so that a later visit works with the
// network off. The build step (web/sw-manifest.mjs) writes BUILD and FILES (path → content
// hash) into the copy in dist/; this source file is only the template.
//
// First visit: installing keeps only the page's shell (the page waits for this worker before
// it loads the rest, so what it loads passes through here and is kept as it arrives); once
// the first result is painted the page asks for the rest ("complete"). A new build: its
// worker installs beside the old one, copies every file whose hash did not change from the
// old cache and downloads the others, then waits: the page says an update is ready, and its
// Reload button lets the new worker take over ("skip-waiting"), which deletes the old cache —
// so a tab still running the old build never gets the new build's files. Every file is kept
// only if its SHA-256 is the build's (a stale copy from an HTTP cache or CDN is refused).
// Dropped models are never kept here (the page keeps them apart, in the cache named
// attnlab-kept-model, only when the user asks).
const BUILD = '%BUILD%';
const FILES = /*FILES*/{};
const ROOT = new URL('./', self.location).pathname;
// per site folder: two copies of attnlab on one origin keep their own caches
const PREFIX = `attnlab-build-${ROOT}-`;
const CACHE = PREFIX + BUILD;
const MANIFEST = '__manifest.json';
// what the page loads before this worker runs
const SHELL = ['index.html', 'boot.js', 'style.css'];

if (BUILD === '%' + 'BUILD%') throw new Error('sw.js is a template: web/sw-manifest.mjs writes the real one');

/** The caches of earlier builds, each with the hashes it was made from. */
async function earlier() {
  const out = [];
  for (const name of await caches.keys()) {
    if (!name.startsWith(PREFIX) || name === CACHE) continue;
    const cache = await caches.open(name);
    const m = await cache.match(MANIFEST);
    out.push({ cache, files: m ? await m.json().catch(() => ({})) : {} });
  }
  return out;
}

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Puts `resp` (the body of `path`) in `cache` if its hash is this build's; false if not. */
async function putChecked(cache, path, resp) {
  const body = await resp.arrayBuffer();
  if (hex(await crypto.subtle.digest('SHA-256', body)) !== FILES[path]) return false;
  // a fresh response: a redirected one may not answer a navigation
  const headers = new Headers(resp.headers);
  headers.delete('content-encoding'); // the body is decoded: its length is what is kept
  headers.set('content-length', String(body.byteLength));
  await cache.put(path, new Response(body, { status: 200, headers }));
  return true;
}

/** Keeps `path`: from an earlier cache when its hash is the same, else from the network. */
async function keep(cache, path, old) {
  for (const o of old) {
    if (o.files[path] !== FILES[path]) continue;
    const hit = await o.cache.match(path);
    if (hit) return cache.put(path, hit);
  }
  const resp = await fetch(path === 'index.html' ? './' : path, { cache: 'no-cache' });
  if (!resp.ok) throw new Error(`${path}: HTTP ${resp.status}`);
  if (!(await putChecked(cache, path, resp))) throw new Error(`${path}: not this build's file`);
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const old = await earlier();
      // an update keeps every file now (the page on screen is the old build's); a first
      // visit only the shell, and takes the page at once
      const paths = old.length ? Object.keys(FILES) : SHELL.filter((p) => p in FILES);
      await Promise.all(paths.map((p) => keep(cache, p, old)));
      await cache.put(MANIFEST, new Response(JSON.stringify(FILES), { headers: { 'content-type': 'application/json' } }));
      if (!old.length) await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

/** The kept file a request asks for, or null (not ours: the network answers). */
function fileFor(request) {
  if (request.method !== 'GET') return null;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || !url.pathname.startsWith(ROOT)) return null;
  const path = decodeURIComponent(url.pathname.slice(ROOT.length));
  if (path in FILES) return path;
  return request.mode === 'navigate' && (path === '' || path.endsWith('/')) ? 'index.html' : null;
}

self.addEventListener('fetch', (event) => {
  const path = fileFor(event.request);
  if (path === null) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      const hit = await cache.match(path);
      if (hit) return hit;
      const resp = await fetch(event.request);
      // kept only when it is this build's file (checked off the page's path)
      if (resp.status === 200) event.waitUntil(putChecked(cache, path, resp.clone()).catch(() => false));
      return resp;
    })(),
  );
});

self.addEventListener('message', (event) => {
  // the page's Reload: an installed update takes over now
  if (event.data?.type === 'skip-waiting') {
    event.waitUntil(self.skipWaiting());
    return;
  }
  // "complete": keep whatever the page did not load itself, then say how much is kept
  if (event.data?.type !== 'complete') return;
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const missing = [];
      for (const p of Object.keys(FILES)) if (!(await cache.match(p))) missing.push(p);
      let error = null;
      for (const p of missing) await keep(cache, p, []).catch((e) => (error = String(e)));
      let bytes = 0;
      let files = 0;
      for (const p of Object.keys(FILES)) {
        const r = await cache.match(p);
        if (!r) continue;
        files += 1;
        const n = Number(r.headers.get('content-length'));
        bytes += Number.isFinite(n) && n > 0 ? n : (await r.arrayBuffer()).byteLength;
      }
      event.source?.postMessage({ type: 'offline', build: BUILD, files, of: Object.keys(FILES).length, bytes, error });
    })(),
  );
});
