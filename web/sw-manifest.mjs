// Writes the service worker into a built site: web/sw.js with this build's id and the content
// hash of every file it keeps for offline use. Run by Trunk after each build (a post_build
// hook, Trunk.toml) on its staging folder; by hand: `node web/sw-manifest.mjs DIR`.
//
// The id is a hash of every kept file's hash, so a build that changes any of them writes a
// different sw.js, which the browser installs as an update; files whose hash did not change
// are carried over from the old cache instead of being downloaded again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Whether the page needs `rel` (a path under the site's root) to run offline. */
export function kept(rel) {
  if (rel === 'sw.js') return false;
  // a served real model (models/, by web/served-models.mjs) is kept only when the user asks
  if (rel.startsWith('models/')) return false;
  // of the model folder, only what the app loads (the card, its plots and logs are for reading)
  if (rel.startsWith('model/')) {
    return ['model/config.json', 'model/tokenizer.json', 'model/model.safetensors'].includes(rel);
  }
  return true;
}

function walk(dir, base = dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return walk(p, base);
    return e.isFile() ? [path.relative(base, p).split(path.sep).join('/')] : [];
  });
}

/** { files: { path: sha256 }, build: id } for the site in `dir`. */
export function manifest(dir) {
  const files = {};
  for (const rel of walk(dir).filter(kept).sort()) {
    files[rel] = crypto.createHash('sha256').update(fs.readFileSync(path.join(dir, rel))).digest('hex');
  }
  const all = Object.entries(files).map(([p, h]) => `${p}\0${h}\n`).join('');
  return { files, build: crypto.createHash('sha256').update(all).digest('hex').slice(0, 16) };
}

/** Writes `dir`/sw.js; returns the build id. */
export function writeWorker(dir) {
  const { files, build } = manifest(dir);
  const template = fs.readFileSync(path.join(HERE, 'sw.js'), 'utf8');
  if (!template.includes("'%BUILD%'") || !template.includes('/*FILES*/{}')) {
    throw new Error('web/sw.js lost its %BUILD% or /*FILES*/{} placeholder');
  }
  const js = template.replace("'%BUILD%'", JSON.stringify(build)).replace('/*FILES*/{}', JSON.stringify(files, null, 1));
  fs.writeFileSync(path.join(dir, 'sw.js'), js);
  return build;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR ?? path.join(HERE, '..', 'dist');
  const build = writeWorker(dir);
  console.log(`sw.js: build ${build}, ${Object.keys(manifest(dir).files).length} files kept for offline use`);
}
