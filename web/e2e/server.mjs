// The static file server of the end-to-end tests and every benchmark: dist/ as
// `trunk build --release` produced it (so they test exactly that), and for the peer benchmark
// more roots on the same origin (`serveMany`). It listens on 127.0.0.1 at a free port and
// records every request it serves, so a harness can show that nothing came from elsewhere.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.onnx': 'application/octet-stream',
  '.png': 'image/png',
  '.md': 'text/markdown; charset=utf-8',
  '.safetensors': 'application/octet-stream',
};

/**
 * Serves `mounts` ({ '/': dir, '/peer/': dir, … }; the longest matching prefix wins; a mount
 * may list the only files it serves as `{ dir, only: ['a', 'b'] }`, or be a Hugging Face Hub
 * mirror, `{ dir, hub: true }`: ORG/NAME/resolve/main/FILE is dir/NAME/FILE). Resolves to
 * { url, requests, close, setRoot } (`setRoot(dir)` serves another folder at `/` from then on:
 * a new build at the same address).
 */
export function serveMany(mounts) {
  const requests = [];
  const table = Object.entries(mounts)
    .map(([prefix, m]) => {
      const { dir, only, hub } = typeof m === 'string' ? { dir: m, only: null } : m;
      return { prefix, root: path.resolve(dir), only: only ? new Set(only) : null, hub: !!hub };
    })
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    const notFound = () => res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    const m = table.find((t) => url.pathname.startsWith(t.prefix));
    if (!m) return notFound();
    let rel;
    try {
      rel = decodeURIComponent(url.pathname.slice(m.prefix.length));
    } catch {
      return notFound();
    }
    if (m.only && !m.only.has(rel)) return notFound();
    // a Hub mirror: ORG/NAME/resolve/main/FILE is the folder NAME's FILE
    if (m.hub) {
      const hub = rel.match(/^[^/]+\/([^/]+)\/resolve\/main\/([^/]+)$/);
      if (!hub) return notFound();
      rel = `${hub[1]}/${hub[2]}`;
    }
    let file = path.resolve(m.root, rel);
    if (file !== m.root && !file.startsWith(m.root + path.sep)) {
      res.writeHead(403).end();
      return;
    }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) return notFound();
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'content-length': st.size,
        'cache-control': 'no-store',
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/`,
        requests,
        setRoot: (dir) => {
          const top = table.find((t) => t.prefix === '/');
          if (top) top.root = path.resolve(dir);
        },
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.();
            server.close(r);
          }),
      });
    });
  });
}

/** Serves the folder `root` (see `serveMany`). */
export function serve(root) {
  return serveMany({ '/': root });
}
