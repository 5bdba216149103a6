// Puts the real models that scripts/serve.sh fetched (target/models, see scripts/lib.sh's
// ensure_smollm2) beside the built app, in models/, where the page's model menu finds them
// (crates/app/src/loader.rs, `SERVED`). Run by Trunk after each build (a post_build hook,
// Trunk.toml) on its staging folder; by hand: `node web/served-models.mjs DIR`. A hard link
// where the file system allows it (no copy of 98 MB), else a copy. A model that was not
// fetched is left out: the menu then says how to get it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVED = ['SmolLM2-135M-Instruct.Q4_1.gguf'];

/** Links each fetched model into `dir`/models; returns the names placed. */
export function place(dir) {
  const placed = [];
  for (const name of SERVED) {
    const from = path.join(ROOT, 'target', 'models', name);
    if (!fs.existsSync(from)) continue;
    const to = path.join(dir, 'models', name);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.rmSync(to, { force: true });
    try {
      fs.linkSync(from, to);
    } catch {
      fs.copyFileSync(from, to);
    }
    placed.push(name);
  }
  return placed;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR ?? path.join(ROOT, 'dist');
  const placed = place(dir);
  console.log(placed.length ? `models/: ${placed.join(', ')}` : 'models/: none fetched (scripts/serve.sh fetches SmolLM2)');
}
