// attnlab's notebook widget (anywidget): the heads grid, one head's map, the steps of one
// query row (QKᵀ → ÷√d_k → mask → softmax, scaled against unscaled), the weighted sum of V
// and the next tokens. The numbers come from the kernel (attnlab's engine, or tensors given
// to attnlab.view); this file only draws them. Nothing is fetched from a network.
//
// The model's fields: meta (a dict: tokens, dims, options, next, roles, span, cells, layer,
// head, kind, lang, error), thumbs (every head pooled: L·H·cells² float32), maps (the
// selected head: weights, or for the engine scores, scaled, masked, weights (T² each) then v
// and out (T·d_k each)), and, set here, text, layer and head.

const WORDS = {
  en: {
    text: "Text",
    heads: "Heads (every head's attention, pooled)",
    map: "Head map",
    steps: "Query row",
    key: "key",
    token: "token",
    score: "q·k",
    scaled: "÷√d_k",
    masked: "masked",
    weight: "softmax",
    unscaled: "unscaled softmax",
    sum: "Weighted sum of V",
    next: "Next token",
    roles: "Head roles",
    role: "role",
    none: "—",
    png: "Save PNG",
    svg: "Save SVG",
    running: "running…",
    tokens: "tokens",
    pooled: (span) => `each cell pools ${span} × ${span} positions`,
    exact: "every cell is one weight",
    pick: "Click a row of the map (or use ↑ ↓) to see its numbers.",
    outIs: (i) => `out[${i}] = Σⱼ w[${i}, j] · v[j]`,
    engineOut: "engine's out",
    thisSum: "the sum here",
    noMaps: "This head's numbers were not saved in this file.",
    layerHead: (l, h) => `layer ${l} · head ${h}`,
    dropped: (n, c) => `the first ${n} tokens were dropped to fit the context of ${c}`,
    pooledMap: (t) => `${t} positions: the map is drawn from the head's pooled thumbnail; the numbers are the last row's`,
    gridKeys: "arrow keys: another head",
    mapKeys: "↑ ↓: a query row, ← →: a key",
    roleNames: { previous: "previous token", first: "first token", self: "self", broad: "broad", local: "local", induction: "induction", duplicate: "duplicate token" },
  },
  ko: {
    text: "문장",
    heads: "헤드 (모든 헤드의 어텐션, 풀링)",
    map: "헤드 맵",
    steps: "쿼리 행",
    key: "키",
    token: "토큰",
    score: "q·k",
    scaled: "÷√d_k",
    masked: "마스크",
    weight: "softmax",
    unscaled: "스케일 없는 softmax",
    sum: "V의 가중합",
    next: "다음 토큰",
    roles: "헤드 역할",
    role: "역할",
    none: "—",
    png: "PNG 저장",
    svg: "SVG 저장",
    running: "계산 중…",
    tokens: "토큰",
    pooled: (span) => `한 칸이 ${span} × ${span} 위치를 풀링`,
    exact: "한 칸이 가중치 하나",
    pick: "맵의 행을 클릭하거나 ↑ ↓ 키로 그 행의 수치를 보세요.",
    outIs: (i) => `out[${i}] = Σⱼ w[${i}, j] · v[j]`,
    engineOut: "엔진의 out",
    thisSum: "여기서 더한 값",
    noMaps: "이 헤드의 수치는 이 파일에 저장되지 않았습니다.",
    layerHead: (l, h) => `레이어 ${l} · 헤드 ${h}`,
    dropped: (n, c) => `문맥 길이 ${c}에 맞추려고 앞의 토큰 ${n}개를 뺐습니다`,
    pooledMap: (t) => `위치 ${t}개: 맵은 이 헤드의 풀링된 썸네일로 그렸고, 수치는 마지막 행입니다`,
    gridKeys: "화살표 키: 다른 헤드",
    mapKeys: "↑ ↓: 쿼리 행, ← →: 키",
    roleNames: { previous: "이전 토큰", first: "첫 토큰", self: "자기 자신", broad: "넓게", local: "가까운 토큰", induction: "유도(induction)", duplicate: "중복 토큰" },
  },
};

const TEXT_ROLES = ["previous", "first", "self", "broad", "local"];

// The float32s of a field's bytes, one array per bytes object (so what is drawn from them can
// be kept while they stay the same).
const floatsOf = new WeakMap();
const NO_FLOATS = new Float32Array(0);
function floats(view) {
  if (!view) return NO_FLOATS;
  if (view instanceof Float32Array) return view;
  let f = floatsOf.get(view);
  if (!f) {
    const buf = view.buffer ?? view;
    const off = view.byteOffset ?? 0;
    const len = view.byteLength ?? buf.byteLength;
    // little-endian float32 bytes; copy when unaligned
    f = off % 4 === 0 ? new Float32Array(buf, off, len / 4) : new Float32Array(buf.slice(off, off + len));
    floatsOf.set(view, f);
  }
  return f;
}

function isDark(el) {
  const body = document.body;
  if (body?.dataset?.jpThemeLight === "false") return true;
  if (body?.dataset?.jpThemeLight === "true") return false;
  if (body?.classList?.contains("vscode-dark") || body?.classList?.contains("vscode-high-contrast")) return true;
  const bg = getComputedStyle(el).getPropertyValue("--jp-layout-color0").trim();
  if (bg) return luminance(bg) < 0.4;
  return window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
}

function luminance(css) {
  const m = css.match(/^#([0-9a-f]{6})$/i);
  if (!m) return 1;
  const n = parseInt(m[1], 16);
  return (0.299 * ((n >> 16) & 255) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255)) / 255;
}

// A sequential colour for a weight in [0, 1] (√ so that small weights still show).
function rgb(w, dark) {
  if (!Number.isFinite(w)) return [128, 128, 128]; // not a weight (NaN): grey, not a neighbour's colour
  const x = Math.sqrt(Math.min(1, Math.max(0, w)));
  const from = dark ? [24, 26, 33] : [255, 255, 255];
  const to = dark ? [255, 196, 84] : [33, 64, 170];
  return from.map((f, i) => Math.round(f + (to[i] - f) * x));
}

function colour(w, dark) {
  const c = rgb(w, dark);
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

// An n × n block of values as a bitmap one pixel a value (drawn scaled, unsmoothed).
function bitmap(values, n, offset, dark) {
  const img = new ImageData(n, n);
  for (let k = 0; k < n * n; k++) {
    const c = rgb(values[offset + k], dark);
    img.data[4 * k] = c[0];
    img.data[4 * k + 1] = c[1];
    img.data[4 * k + 2] = c[2];
    img.data[4 * k + 3] = 255;
  }
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = n;
  canvas.getContext("2d").putImageData(img, 0, 0);
  return canvas;
}

// Bitmaps kept while their values and the theme stay the same: picking a head or a row
// redraws from them instead of building every bitmap again.
function bitmaps() {
  let kept = { of: null, dark: null, byOffset: new Map() };
  return (values, n, offset, dark) => {
    if (kept.of !== values || kept.dark !== dark) kept = { of: values, dark, byOffset: new Map() };
    let b = kept.byOffset.get(offset);
    if (!b) kept.byOffset.set(offset, (b = bitmap(values, n, offset, dark)));
    return b;
  };
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c != null) e.append(c);
  return e;
}

const fmt = (x) => (x === -Infinity ? "−∞" : Number.isFinite(x) ? x.toFixed(Math.abs(x) >= 100 ? 1 : 3) : String(x));

function softmax(row, n, scale, tau, mask) {
  // row: scores; keys past n are masked when `mask`
  const out = new Float64Array(row.length);
  let m = -Infinity;
  for (let j = 0; j < row.length; j++) if (!mask || j < n) m = Math.max(m, (row[j] * scale) / tau);
  let s = 0;
  for (let j = 0; j < row.length; j++) {
    if (mask && j >= n) continue;
    out[j] = Math.exp((row[j] * scale) / tau - m);
    s += out[j];
  }
  for (let j = 0; j < row.length; j++) out[j] /= s;
  return out;
}

function download(name, blob) {
  const a = el("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  setTimeout(() => {
    URL.revokeObjectURL(a.href);
    a.remove();
  }, 1000);
}

function render({ model, el: root }) {
  const state = { row: null, key: null, t: 0 };
  const gridTiles = bitmaps();
  const mapTiles = bitmaps();
  const meta = () => model.get("meta") || {};
  const words = () => WORDS[meta().lang === "ko" ? "ko" : "en"];
  root.classList.add("attnlab-widget");
  // keys typed or pressed in the widget are its own, not the notebook's shortcuts
  root.dataset.lmSuppressShortcuts = "true";
  root.dataset.pSuppressShortcuts = "true";

  const textBox = el("textarea", { class: "attnlab-text", rows: "2", spellcheck: "false" });
  const status = el("div", { class: "attnlab-status", role: "status", "aria-live": "polite" });
  const gridTitle = el("h4");
  const grid = el("canvas", { class: "attnlab-grid", tabindex: "0", role: "img" });
  const gridNote = el("div", { class: "attnlab-note" });
  const mapTitle = el("h4");
  const map = el("canvas", { class: "attnlab-map", tabindex: "0", role: "img" });
  const hover = el("div", { class: "attnlab-hover", "aria-live": "polite" });
  const png = el("button", { type: "button", class: "attnlab-png" });
  const svg = el("button", { type: "button", class: "attnlab-svg" });
  const steps = el("div", { class: "attnlab-steps" });
  const sum = el("div", { class: "attnlab-sum" });
  const next = el("div", { class: "attnlab-next" });
  const roles = el("div", { class: "attnlab-roles" });
  let timer = null;

  textBox.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      status.textContent = words().running;
      model.set("text", textBox.value);
      model.save_changes();
    }, 150);
  });

  root.append(
    el("div", { class: "attnlab-top" }, textBox, status),
    el("div", { class: "attnlab-row" },
      el("section", { class: "attnlab-heads" }, gridTitle, grid, gridNote, roles),
      el("section", { class: "attnlab-head" }, mapTitle, el("div", { class: "attnlab-buttons" }, png, svg), map, hover, steps, sum),
      el("section", { class: "attnlab-nexts" }, next)),
  );

  function selected() {
    return [model.get("layer") ?? 0, model.get("head") ?? 0];
  }

  function select(l, h) {
    const d = meta().dims;
    if (!d) return;
    l = Math.max(0, Math.min(d.n_layer - 1, l));
    h = Math.max(0, Math.min(d.n_head - 1, h));
    model.set("layer", l);
    model.set("head", h);
    model.save_changes();
    drawGrid();
  }

  // the heads grid: one pooled thumbnail per head, layers down, heads across
  const CELL = () => {
    const d = meta().dims;
    return d && d.n_layer * d.n_head > 64 ? 40 : 64;
  };
  function drawGrid() {
    const m = meta();
    const d = m.dims;
    if (!d) return;
    const w = words();
    const dark = isDark(root);
    const th = floats(model.get("thumbs"));
    const cells = m.cells;
    const size = CELL();
    const gap = 4;
    const lab = 34;
    grid.width = lab + d.n_head * (size + gap);
    grid.height = 16 + d.n_layer * (size + gap);
    const g = grid.getContext("2d");
    g.fillStyle = dark ? "#15161b" : "#ffffff";
    g.fillRect(0, 0, grid.width, grid.height);
    g.font = "11px sans-serif";
    g.fillStyle = dark ? "#ddd" : "#333";
    for (let h = 0; h < d.n_head; h++) g.fillText(`H${h}`, lab + h * (size + gap) + size / 2 - 8, 11);
    const [sl, sh] = selected();
    for (let l = 0; l < d.n_layer; l++) {
      g.fillStyle = dark ? "#ddd" : "#333";
      g.fillText(`L${l}`, 2, 16 + l * (size + gap) + size / 2 + 4);
      for (let h = 0; h < d.n_head; h++) {
        const x0 = lab + h * (size + gap);
        const y0 = 16 + l * (size + gap);
        if (th.length >= (l * d.n_head + h + 1) * cells * cells) {
          g.imageSmoothingEnabled = false;
          g.drawImage(gridTiles(th, cells, (l * d.n_head + h) * cells * cells, dark), x0, y0, size, size);
        }
        const role = m.roles?.[l * d.n_head + h]?.role;
        if (role) {
          g.fillStyle = dark ? "rgba(0,0,0,.7)" : "rgba(255,255,255,.8)";
          g.fillRect(x0, y0 + size - 12, size, 12);
          g.fillStyle = dark ? "#ffd27a" : "#1b3a9a";
          g.font = "9px sans-serif";
          g.fillText((w.roleNames[role] ?? role).slice(0, 9), x0 + 2, y0 + size - 3, size - 3);
          g.font = "11px sans-serif";
        }
        if (l === sl && h === sh) {
          g.strokeStyle = "#e4572e";
          g.lineWidth = 2;
          g.strokeRect(x0 - 1, y0 - 1, size + 2, size + 2);
        }
      }
    }
    grid.setAttribute("aria-label", `${w.heads}: ${w.layerHead(sl, sh)} (${w.gridKeys})`);
    gridNote.textContent = m.span > 1 ? w.pooled(m.span) : w.exact;
  }

  grid.addEventListener("click", (e) => {
    const d = meta().dims;
    if (!d) return;
    const r = grid.getBoundingClientRect();
    const sx = grid.width / r.width;
    const size = CELL();
    const h = Math.floor(((e.clientX - r.left) * sx - 34) / (size + 4));
    const l = Math.floor(((e.clientY - r.top) * sx - 16) / (size + 4));
    if (h >= 0 && l >= 0 && h < d.n_head && l < d.n_layer) select(l, h);
  });
  grid.addEventListener("keydown", (e) => {
    const [l, h] = selected();
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (moves[e.key]) {
      e.preventDefault();
      e.stopPropagation();
      select(l + moves[e.key][0], h + moves[e.key][1]);
      status.textContent = words().layerHead(model.get("layer"), model.get("head"));
    }
  });

  // the selected head's maps, from the `maps` bytes (split once per bytes and text size)
  let split = { of: null, dims: null, maps: null };
  function headMaps() {
    const d = meta().dims;
    if (!d) return null;
    const f = floats(model.get("maps"));
    if (split.of !== f || split.dims !== d) split = { of: f, dims: d, maps: splitMaps(f, d) };
    return split.maps;
  }
  function splitMaps(f, d) {
    const t = d.t;
    const tt = t * t;
    if (f.length === tt) return { weights: f };
    if (t > 1 && f.length === 4 * t + 2 * t * d.d_k) {
      // a long text: the last row's four maps only (as rows of a T × T map: row t − 1)
      const at = (k) => {
        const m = new Float32Array(0);
        m.row = f.subarray(k * t, (k + 1) * t);
        return m;
      };
      return {
        rowOnly: true,
        scores: at(0),
        scaled: at(1),
        masked: at(2),
        weights: at(3),
        v: f.subarray(4 * t, 4 * t + t * d.d_k),
        out: f.subarray(4 * t + t * d.d_k),
      };
    }
    if (f.length === 4 * tt + 2 * t * d.d_k)
      return {
        scores: f.subarray(0, tt),
        scaled: f.subarray(tt, 2 * tt),
        masked: f.subarray(2 * tt, 3 * tt),
        weights: f.subarray(3 * tt, 4 * tt),
        v: f.subarray(4 * tt, 4 * tt + t * d.d_k),
        out: f.subarray(4 * tt + t * d.d_k),
      };
    return null;
  }

  function mapGeometry() {
    const t = meta().dims.t;
    // at most ≈ 1,024 pixels a side: past that, a pixel shows the mean of several cells
    const px = t <= 1024 ? Math.max(1, Math.min(28, Math.floor(520 / t))) : 1024 / t;
    const lab = px >= 10 ? 64 : 0;
    return { t, px, lab };
  }

  // weight (i, j) of the selected head: the map's, or in a long text the last row's only
  function weightAt(maps, i, j, t) {
    if (maps.rowOnly) return i === t - 1 ? maps.weights.row[j] : NaN;
    return maps.weights[i * t + j];
  }
  const rowOf = (map, i, t) => (map.row ? map.row : map.subarray(i * t, (i + 1) * t));

  function drawMap() {
    const m = meta();
    const d = m.dims;
    if (!d) return;
    const w = words();
    const [l, h] = selected();
    mapTitle.textContent = `${w.map} · ${w.layerHead(l, h)}`;
    const maps = headMaps();
    const dark = isDark(root);
    const { t, px, lab } = mapGeometry();
    map.width = Math.ceil(lab + t * px);
    map.height = Math.ceil(lab + t * px);
    const g = map.getContext("2d");
    g.fillStyle = dark ? "#15161b" : "#ffffff";
    g.fillRect(0, 0, map.width, map.height);
    if (!maps) {
      g.fillStyle = dark ? "#ddd" : "#333";
      g.fillText(w.noMaps, 4, 14);
      return;
    }
    g.imageSmoothingEnabled = false;
    if (maps.rowOnly) {
      // the head's pooled thumbnail stands for its map; the last row is exact
      const th = floats(model.get("thumbs"));
      const cells = m.cells;
      g.drawImage(gridTiles(th, cells, (l * d.n_head + h) * cells * cells, dark), lab, lab, t * px, t * px);
      hover.textContent = w.pooledMap(t);
    } else {
      g.drawImage(mapTiles(maps.weights, t, 0, dark), lab, lab, t * px, t * px);
    }
    if (lab) {
      g.fillStyle = dark ? "#ddd" : "#333";
      g.font = `${Math.min(12, px)}px sans-serif`;
      m.tokens.forEach((tok, i) => {
        g.fillText(tok.slice(0, 8), 2, lab + i * px + px * 0.8, lab - 4);
        g.save();
        g.translate(lab + i * px + px * 0.8, lab - 2);
        g.rotate(-Math.PI / 2);
        g.fillText(tok.slice(0, 8), 0, 0, lab - 4);
        g.restore();
      });
    }
    if (state.row != null && state.row < t) {
      g.strokeStyle = "#e4572e";
      g.lineWidth = 2;
      g.strokeRect(lab, lab + state.row * px, t * px, Math.max(px, 2));
      if (state.key != null && state.key < t) g.strokeRect(lab + state.key * px, lab + state.row * px, Math.max(px, 2), Math.max(px, 2));
    }
    map.setAttribute("aria-label", `${w.map} ${w.layerHead(l, h)}, ${t} ${w.tokens} (${w.mapKeys})`);
  }

  function cellAt(e) {
    const { t, px, lab } = mapGeometry();
    const r = map.getBoundingClientRect();
    const sx = map.width / r.width;
    const j = Math.floor(((e.clientX - r.left) * sx - lab) / px);
    const i = Math.floor(((e.clientY - r.top) * sx - lab) / px);
    return i >= 0 && j >= 0 && i < t && j < t ? [i, j] : null;
  }
  map.addEventListener("mousemove", (e) => {
    const c = cellAt(e);
    const maps = headMaps();
    if (!c || !maps) return void (hover.textContent = "");
    showCell(c[0], c[1]);
  });
  function showCell(i, j) {
    const maps = headMaps();
    const toks = meta().tokens;
    if (!maps) return;
    const wt = weightAt(maps, i, j, toks.length);
    hover.textContent = Number.isNaN(wt) ? "" : `${toks[i]} → ${toks[j]}: ${fmt(wt)}`;
  }
  map.addEventListener("click", (e) => {
    const c = cellAt(e);
    if (c) setRow(c[0]);
  });
  map.addEventListener("keydown", (e) => {
    const t = meta().dims?.t ?? 0;
    const r = headMaps()?.rowOnly ? t - 1 : state.row ?? t - 1;
    const k = state.key ?? r;
    if (e.key === "ArrowUp") setRow(Math.max(0, r - 1));
    else if (e.key === "ArrowDown") setRow(Math.min(t - 1, r + 1));
    else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      state.row = r;
      state.key = Math.max(0, Math.min(t - 1, k + (e.key === "ArrowLeft" ? -1 : 1)));
      drawMap();
      drawSteps();
      showCell(state.row, state.key);
    } else return;
    e.preventDefault();
    e.stopPropagation();
  });

  function setRow(i) {
    // a long text's numbers are its last row's only: the row stays there
    const maps = headMaps();
    if (maps?.rowOnly) i = meta().dims.t - 1;
    state.row = i;
    if (state.key != null) showCell(i, state.key);
    drawMap();
    drawSteps();
  }

  function drawSteps() {
    const m = meta();
    const d = m.dims;
    const w = words();
    steps.replaceChildren();
    sum.replaceChildren();
    const maps = headMaps();
    if (!d || !maps) return;
    const t = d.t;
    const i = maps.rowOnly ? t - 1 : Math.min(state.row ?? t - 1, t - 1);
    const toks = m.tokens;
    steps.append(el("h4", {}, `${w.steps} ${i} «${toks[i]}»`));
    if (state.row == null) steps.append(el("div", { class: "attnlab-note" }, w.pick));
    const o = m.options || {};
    const mask = o.causal_mask !== false;
    const tau = o.temperature ?? 1;
    const cols = [w.key, w.token];
    let unscaled = null;
    if (maps.scores) {
      cols.push(w.score, w.scaled, w.masked);
      unscaled = softmax(rowOf(maps.scores, i, t), i + 1, 1, tau, mask);
    }
    cols.push(w.weight);
    if (unscaled) cols.push(w.unscaled);
    const table = el("table", { class: "attnlab-table" });
    table.append(el("tr", {}, ...cols.map((c) => el("th", {}, c))));
    const n = mask ? i + 1 : t;
    const shown = Math.min(n, 64);
    // the strongest keys first when the row is long
    const order = [...Array(n).keys()];
    const row = (map) => rowOf(map, i, t);
    if (n > shown) order.sort((a, b) => row(maps.weights)[b] - row(maps.weights)[a]);
    for (const j of order.slice(0, shown)) {
      const cells = [String(j), toks[j]];
      if (maps.scores) cells.push(fmt(row(maps.scores)[j]), fmt(row(maps.scaled)[j]), fmt(row(maps.masked)[j]));
      const wt = row(maps.weights)[j];
      cells.push(fmt(wt));
      if (unscaled) cells.push(fmt(unscaled[j]));
      const raw = [j, null];
      if (maps.scores) raw.push(row(maps.scores)[j], row(maps.scaled)[j], row(maps.masked)[j]);
      raw.push(wt);
      if (unscaled) raw.push(unscaled[j]);
      // each number's whole value (the float32 the engine gave) on its cell, for exports and tests
      const tr = el("tr", { "data-key": String(j), class: j === state.key ? "attnlab-key" : "" }, ...cells.map((c, k) => el("td", k > 1 ? { "data-v": String(raw[k]) } : {}, c)));
      tr.style.setProperty("--w", String(wt));
      table.append(tr);
    }
    steps.append(table);
    if (!maps.v) return;
    // the weighted sum of V: out_i = Σ_j w_ij v_j, here and from the engine
    const dk = d.d_k;
    const here = new Float64Array(dk);
    for (let j = 0; j < t; j++) {
      const wt = row(maps.weights)[j];
      if (wt === 0) continue;
      for (let k = 0; k < dk; k++) here[k] += wt * maps.v[j * dk + k];
    }
    const show = Math.min(dk, 8);
    const vt = el("table", { class: "attnlab-table" });
    vt.append(el("tr", {}, el("th", {}, "k"), ...[...Array(show).keys()].map((k) => el("th", {}, String(k)))));
    vt.append(el("tr", {}, el("th", {}, w.thisSum), ...[...Array(show).keys()].map((k) => el("td", {}, fmt(here[k])))));
    vt.append(el("tr", {}, el("th", {}, w.engineOut), ...[...Array(show).keys()].map((k) => el("td", {}, fmt(maps.out[i * dk + k])))));
    sum.append(el("h4", {}, w.sum), el("div", { class: "attnlab-note" }, w.outIs(i)), vt);
  }

  function drawNext() {
    const m = meta();
    const w = words();
    next.replaceChildren();
    if (!m.next?.length) return;
    next.append(el("h4", {}, w.next));
    for (const n of m.next) {
      const bar = el("div", { class: "attnlab-bar" });
      bar.style.width = `${Math.round(n.prob * 100)}%`;
      next.append(el("div", { class: "attnlab-nexttok" }, el("span", {}, n.display), el("span", {}, `${(n.prob * 100).toFixed(1)}%`), bar));
    }
  }

  function drawRoles() {
    const m = meta();
    const w = words();
    roles.replaceChildren();
    if (!m.roles || !m.dims) return;
    const all = m.roles.map((r, k) => ({ ...r, l: Math.floor(k / m.dims.n_head), h: k % m.dims.n_head }));
    const pick = (r) => ({
      tabindex: "0",
      role: "button",
      class: "attnlab-pick",
      onclick: () => select(r.l, r.h),
      onkeydown: (e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        select(r.l, r.h);
      },
    });
    if (all.length > 32) {
      // many heads: each role's strongest four, clickable
      roles.append(el("h4", {}, w.roles));
      const table = el("table", { class: "attnlab-table attnlab-best" });
      for (const code of TEXT_ROLES) {
        const best = all.filter((r) => r[code] != null).sort((a, b) => b[code] - a[code]).slice(0, 4);
        if (!best.length) continue;
        table.append(el("tr", {}, el("th", {}, w.roleNames[code]), ...best.map((r) => el("td", pick(r), `L${r.l}H${r.h} ${r[code].toFixed(2)}`))));
      }
      roles.append(table);
      return;
    }
    const rows = all.filter((r) => r.role);
    if (!rows.length) return;
    roles.append(el("h4", {}, w.roles));
    const table = el("table", { class: "attnlab-table" });
    table.append(el("tr", {}, el("th", {}, "L.H"), el("th", {}, w.role), ...TEXT_ROLES.map((r) => el("th", {}, w.roleNames[r]))));
    for (const r of rows.slice(0, 40)) {
      const tr = el(
        "tr",
        pick(r),
        el("td", {}, `${r.l}.${r.h}`),
        el("td", {}, w.roleNames[r.role] ?? r.role),
        ...TEXT_ROLES.map((k) => el("td", {}, r[k] == null ? w.none : r[k].toFixed(2))),
      );
      table.append(tr);
    }
    roles.append(table);
  }

  png.addEventListener("click", () => {
    const [l, h] = selected();
    map.toBlob((b) => b && download(`attnlab-L${l}H${h}.png`, b));
  });
  svg.addEventListener("click", () => {
    const [l, h] = selected();
    download(`attnlab-L${l}H${h}.svg`, new Blob([toSvg()], { type: "image/svg+xml" }));
  });

  function toSvg() {
    const m = meta();
    const maps = headMaps();
    const t = m.dims.t;
    const [l, h] = selected();
    // a long text's map is its pooled thumbnail (at most 64 cells a side), unlabelled
    const pooled = !maps || maps.rowOnly || t > 128;
    const n = pooled ? m.cells : t;
    const values = pooled ? floats(model.get("thumbs")).subarray((l * m.dims.n_head + h) * n * n, (l * m.dims.n_head + h + 1) * n * n) : maps.weights;
    const px = pooled ? Math.max(4, Math.floor(1024 / n)) : 16;
    const lab = pooled ? 0 : 70;
    const esc = (s) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
    const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${lab + n * px}" height="${lab + n * px}" font-family="sans-serif" font-size="10">`];
    for (let i = 0; i < n; i++) {
      if (!pooled) {
        parts.push(`<text x="2" y="${lab + i * px + 12}">${esc(m.tokens[i])}</text>`);
        parts.push(`<text transform="translate(${lab + i * px + 12},${lab - 2}) rotate(-90)">${esc(m.tokens[i])}</text>`);
      }
      for (let j = 0; j < n; j++) {
        const wt = values[i * n + j];
        parts.push(`<rect x="${lab + j * px}" y="${lab + i * px}" width="${px}" height="${px}" fill="${colour(wt, false)}"><title>${fmt(wt)}</title></rect>`);
      }
    }
    parts.push("</svg>");
    return parts.join("");
  }

  function drawAll() {
    const m = meta();
    const w = words();
    root.classList.toggle("attnlab-dark", isDark(root));
    gridTitle.textContent = w.heads;
    png.textContent = w.png;
    svg.textContent = w.svg;
    textBox.setAttribute("aria-label", w.text);
    textBox.hidden = m.kind !== "engine";
    textBox.readOnly = !!m.static;
    if (document.activeElement !== textBox && m.kind === "engine") textBox.value = model.get("text") ?? "";
    if (m.error) status.textContent = m.error;
    else if (m.dims) status.textContent = `${m.dims.t} ${w.tokens}${m.ms != null ? ` · ${m.ms.toFixed(1)} ms` : ""}${m.dropped ? ` · ${w.dropped(m.dropped, m.context)}` : ""}`;
    // a row picked at the end follows the end as the text grows (typing shows the newest token)
    if (m.dims && state.row != null && (state.row >= m.dims.t || (state.row === state.t - 1 && m.dims.t !== state.t))) state.row = null;
    if (m.dims) state.t = m.dims.t;
    if (m.dims && state.key != null && state.key >= m.dims.t) state.key = null;
    drawGrid();
    drawMap();
    drawSteps();
    drawNext();
    drawRoles();
    root.dataset.painted = String((Number(root.dataset.painted) || 0) + 1);
  }

  model.on("change:meta", drawAll);
  model.on("change:maps", () => {
    const t = meta().dims?.t ?? 0;
    if (state.row != null && state.row >= t) state.row = state.key = null;
    drawMap();
    drawSteps();
  });
  model.on("change:thumbs", drawGrid);
  // the notebook's theme switched: the canvases are drawn again in its colours
  const themes = new MutationObserver(drawAll);
  themes.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "class"] });
  drawAll();
  return () => {
    clearTimeout(timer);
    themes.disconnect();
  };
}

export default { render };
