"""attnlab's views in a notebook cell (anywidget: JupyterLab 4, Notebook 7, VS Code).

`show(model, text)` runs attnlab's engine **in the kernel** — the model is already loaded
there (SmolLM2's 98 MB is not sent to the browser a second time), the numbers are the CLI's
to the bit, and the widget needs no worker, WebGPU or wasm permission inside the notebook's
page. Each edit in the widget's text box reruns the model in the kernel and sends back only
what the views draw: every head pooled to at most 64 × 64 cells, the selected head's maps and
vectors, the next tokens. `view(attention, tokens)` draws attention computed anywhere else.

The widget's script and styles ship inside the package (attnlab/static) and nothing is
fetched from a network. `Widget.save_html(path)` writes one standalone file.
"""

from __future__ import annotations

import base64
import html
import json
import pathlib
import time
from typing import Any, Optional, Sequence

import anywidget
import numpy as np
import traitlets

from . import _native

STATIC = pathlib.Path(__file__).parent / "static"
SIDE = 64  # cells on a thumbnail's side, as the page's heads grid
SAVE_LIMIT = 64 << 20  # bytes of maps a saved file carries for every head
WHOLE_MAP = 2048  # positions up to which a head's maps are sent whole (16 · T² bytes)
NEXT = 8


def _lang(lang: Optional[str], sample: str) -> str:
    if lang in ("ko", "en"):
        return lang
    if lang is not None:
        raise ValueError(f"lang must be 'ko', 'en' or None (from the text), got {lang!r}")
    return "ko" if any("\uac00" <= c <= "\ud7a3" for c in sample) else "en"


class _Engine:
    """The kernel's engine behind `show`: a model and the attention options."""

    kind = "engine"

    def __init__(self, model, options: dict):
        self.model = model
        self.options = options
        self.run = None
        # every head pooled for the grid, kept up to date row by row as the text is edited
        self.pooler = _native.Pooler(SIDE)

    def update(self, text: str) -> dict:
        started = time.perf_counter()
        # the last run's positions are reused: typing at the end computes one position; the
        # first run of a long text draws a bar over the layers under the cell
        self.run = self.model.run(text, **self.options, prev=self.run, progress=self.run is None)
        span, cells, thumbs, roles = self.pooler.update(self.run._r)
        ms = (time.perf_counter() - started) * 1000
        r = self.run
        self.thumbs = bytes(thumbs)
        return {
            "dropped": r.dropped,
            "context": self.model.context,
            "tokens": r.tokens,
            "dims": {"n_layer": r.n_layer, "n_head": r.n_head, "t": r.t, "d_k": r.d_k},
            "options": r.options,
            "next": r.top(NEXT),
            "span": span,
            "cells": cells,
            "roles": json.loads(roles),
            "ms": ms,
            "source": self.model.info["source"],
        }

    def maps(self, layer: int, head: int) -> bytes:
        r = self.run._r
        t = self.run.t
        _, _, v, out = r.head_vectors(layer, head)
        # scores, scaled, masked, weights — whole, or past WHOLE_MAP the last row's only
        # (the map is then drawn from the pooled thumbnail) — then v and the head's output
        maps = r.head_rows(layer, head, 0 if t <= WHOLE_MAP else t - 1, t)
        return b"".join([*maps, v, out])

    def map_bytes(self) -> int:
        r = self.run
        return r.n_layer * r.n_head * (4 * r.t * r.t + 2 * r.t * r.d_k) * 4


def _as_numpy(x: Any) -> np.ndarray:
    if hasattr(x, "detach"):  # a torch tensor, without importing torch
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float32)


def _attention_array(attention: Any) -> np.ndarray:
    """[layers, heads, T, T] from a 4-D array or a per-layer sequence of [heads, T, T] or
    [1, heads, T, T] (Hugging Face's `output_attentions`, a TransformerLens cache's
    `pattern`s)."""
    if isinstance(attention, (list, tuple)):
        if not attention:
            raise ValueError("attention is an empty sequence: give one [heads, T, T] array per layer")
        layers = []
        for i, a in enumerate(attention):
            a = _as_numpy(a)
            if a.ndim == 4 and a.shape[0] == 1:
                a = a[0]
            if a.ndim != 3:
                raise ValueError(
                    f"attention[{i}] has shape {a.shape}: each layer must be [heads, T, T] "
                    "(or [1, heads, T, T], a batch of one)"
                )
            layers.append(a)
        shapes = {a.shape for a in layers}
        if len(shapes) != 1:
            raise ValueError(f"the layers' shapes differ: {sorted(shapes)}")
        arr = np.stack(layers)
    else:
        arr = _as_numpy(attention)
        if arr.ndim == 5 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim == 3:
            arr = arr[None]
    if arr.ndim != 4 or arr.shape[2] != arr.shape[3]:
        raise ValueError(
            f"attention has shape {arr.shape}: it must be [layers, heads, T, T] "
            "(or a list of [heads, T, T] per layer)"
        )
    if arr.shape[2] == 0 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"attention has shape {arr.shape}: nothing to show")
    if not np.all(np.isfinite(arr)):
        raise ValueError("attention holds NaN or infinite values")
    return np.ascontiguousarray(arr, dtype="<f4")


def pool(weights: np.ndarray, side: int = SIDE):
    """Each [T, T] map pooled to at most `side` × `side` cells as the engine pools a run's
    heads (the same Rust code): a cell is the mean over its query rows of the weight those
    rows give its keys (so a row of cells sums as a row of weights does); the span is the
    smallest power of two that makes at most `side` cells. Returns (span, cells, [...,
    cells, cells])."""
    if side < 1:
        raise ValueError(f"side must be at least 1, got {side}")
    weights = np.ascontiguousarray(weights, dtype="<f4")
    t = weights.shape[-1]
    heads = weights.size // (t * t) if t else 0
    span, cells, raw = _native.pool_maps(weights.tobytes(), heads, t, min(side, t) or 1)
    return span, cells, np.frombuffer(raw, dtype="<f4").reshape(*weights.shape[:-2], cells, cells)


class _Tensors:
    """Attention computed elsewhere, behind `view`."""

    kind = "tensor"

    def __init__(self, attention: Any, tokens: Sequence[str]):
        arr = _attention_array(attention)
        n_layer, n_head, t, _ = arr.shape
        if isinstance(tokens, str) or not all(isinstance(s, str) for s in tokens):
            raise ValueError("tokens must be a list of str, one per position")
        tokens = list(tokens)
        if len(tokens) != t:
            raise ValueError(f"{len(tokens)} tokens for attention over {t} positions")
        self.arr = arr
        self.causal = bool(np.all(np.triu(arr, 1) == 0))
        roles = json.loads(_native.text_roles(arr.tobytes(), n_layer * n_head, t, self.causal))
        span, cells, pooled = pool(arr)
        self.thumbs = pooled.astype("<f4").tobytes()
        self.dropped = 0
        self.meta = {
            "tokens": tokens,
            "dims": {"n_layer": n_layer, "n_head": n_head, "t": t, "d_k": 0},
            "options": {"causal_mask": self.causal, "temperature": 1.0},
            "next": [],
            "span": span,
            "cells": cells,
            "roles": roles,
        }

    def update(self, text: str) -> dict:
        return self.meta

    def maps(self, layer: int, head: int) -> bytes:
        return self.arr[layer, head].tobytes()

    def map_bytes(self) -> int:
        return self.arr.nbytes


class Widget(anywidget.AnyWidget):
    """The views of one run: the heads grid, a head's map and numbers, the next tokens."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    meta = traitlets.Dict().tag(sync=True)
    thumbs = traitlets.Bytes(b"").tag(sync=True)
    maps = traitlets.Bytes(b"").tag(sync=True)
    text = traitlets.Unicode("").tag(sync=True)
    layer = traitlets.Int(0).tag(sync=True)
    head = traitlets.Int(0).tag(sync=True)

    def __init__(self, source, text: str, lang: str, layer: int = 0, head: int = 0):
        self._source = source
        self._lang = lang
        super().__init__()
        meta = source.update(text)
        d = meta["dims"]
        if not (0 <= layer < d["n_layer"] and 0 <= head < d["n_head"]):
            raise ValueError(f"no head ({layer}, {head}): {d['n_layer']} layers × {d['n_head']} heads")
        self._sent = (layer, head)
        with self.hold_sync():
            self.text = text
            self.layer, self.head = layer, head
            self.thumbs = source.thumbs
            self.maps = source.maps(layer, head)
            self.meta = self._full(meta)

    def _full(self, meta: dict) -> dict:
        # what the view needs beside the source's result
        return {**meta, "kind": self._source.kind, "lang": self._lang, "error": None}

    @traitlets.observe("text")
    def _rerun(self, change):
        if self._source.kind != "engine" or not self.meta:
            return
        try:
            meta = self._source.update(change["new"])
        except (ValueError, UnicodeError) as e:
            # the last result stays on screen, with the reason this text gave none
            self.meta = {**self.meta, "error": str(e)}
            return
        with self.hold_sync():
            self.thumbs = self._source.thumbs
            self.maps = self._source.maps(self.layer, self.head)
            self._sent = (self.layer, self.head)
            self.meta = self._full(meta)

    @traitlets.observe("layer", "head")
    def _pick(self, change):
        # the view sets layer and head together: one head's maps are sent once
        d = self.meta.get("dims") if self.meta else None
        pair = (self.layer, self.head)
        if not d or pair == self._sent or not (0 <= pair[0] < d["n_layer"] and 0 <= pair[1] < d["n_head"]):
            return
        self._sent = pair
        self.maps = self._source.maps(*pair)

    @property
    def run(self):
        """The engine's run behind the views (`show` only)."""
        return getattr(self._source, "run", None)

    def save_html(self, path) -> pathlib.Path:
        """This widget as one standalone HTML file (no network): the views as they are now;
        every head's numbers are kept when they fit in 64 MiB, else the selected head's. The
        text cannot be edited there (no engine runs in the file)."""
        path = pathlib.Path(path)
        d = self.meta["dims"]
        pairs = [(l, h) for l in range(d["n_layer"]) for h in range(d["n_head"])]
        if self._source.map_bytes() > SAVE_LIMIT:
            pairs = [(self.layer, self.head)]
        b64 = lambda b: base64.b64encode(b).decode("ascii")
        maps = {f"{l}.{h}": b64(self._source.maps(l, h)) for l, h in pairs}
        state = {
            "meta": {**self.meta, "static": True},
            "text": self.text,
            "layer": self.layer,
            "head": self.head,
            "thumbs": b64(self.thumbs),
            "maps": maps,
        }
        page = _PAGE.format(
            title=html.escape(f"attnlab · {self.text[:60] or 'attention'}"),
            css=(STATIC / "widget.css").read_text(encoding="utf-8"),
            # no "<" inside the script at all: a token such as "<!--<script>" cannot change
            # how the page's parser reads it
            state=json.dumps(state).replace("<", "\\u003c"),
            esm=json.dumps((STATIC / "widget.js").read_text(encoding="utf-8")).replace("<", "\\u003c"),
        )
        path.write_text(page, encoding="utf-8")
        return path


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attnlab">
<style>body {{ margin: 16px; }} @media (prefers-color-scheme: dark) {{ body {{ background: #15161b; }} }}
{css}</style></head>
<body><div id="attnlab"></div>
<script type="module">
const state = {state};
const bytes = (s) => {{
  const bin = atob(s);
  const u = new Uint8Array(bin.length);
  for (let i = 0; i !== bin.length; i++) u[i] = bin.charCodeAt(i);
  return new DataView(u.buffer);
}};
const values = {{ meta: state.meta, text: state.text, layer: state.layer, head: state.head, thumbs: bytes(state.thumbs) }};
const mapsOf = () => {{
  const m = state.maps[`${{values.layer}}.${{values.head}}`];
  return m ? bytes(m) : new DataView(new ArrayBuffer(0));
}};
values.maps = mapsOf();
const handlers = {{}};
const model = {{
  get: (k) => values[k],
  set(k, v) {{
    values[k] = v;
    if (k === "layer" || k === "head") {{
      values.maps = mapsOf();
      (handlers["change:maps"] || []).forEach((f) => f());
    }}
  }},
  save_changes() {{}},
  on(ev, f) {{ (handlers[ev] ||= []).push(f); }},
  off() {{}},
}};
const url = URL.createObjectURL(new Blob([{esm}], {{ type: "text/javascript" }}));
const mod = await import(url);
mod.default.render({{ model, el: document.getElementById("attnlab") }});
</script></body></html>
"""


def show(
    model,
    text: str,
    *,
    layer: int = 0,
    head: int = 0,
    lang: Optional[str] = None,
    temperature: float = 1.0,
    unscaled: bool = False,
    no_mask: bool = False,
    heads_off=(),
) -> Widget:
    """The live views of `model` on `text` in a notebook cell; editing the text in the widget
    reruns the model (in the kernel). `lang`: "ko" or "en" (default: Korean for a Korean
    text). The attention options are `Model.run`'s."""
    from . import Model, _options, _text

    if not isinstance(model, Model):
        raise TypeError(f"show takes an attnlab.Model (attnlab.load()), not {type(model).__name__}")
    text = _text(text)
    options = _options(temperature, unscaled, no_mask, heads_off)
    return Widget(_Engine(model, options), text, _lang(lang, text), layer, head)


def view(attention, tokens: Sequence[str], *, layer: int = 0, head: int = 0, lang: Optional[str] = None) -> Widget:
    """Attention computed anywhere — [layers, heads, T, T], or a list of [heads, T, T] (or
    [1, heads, T, T]) per layer, numpy or torch (e.g. Hugging Face's `output_attentions`) —
    as the heads grid, a head's map and the head-role scores: bertviz's `head_view` /
    `model_view` in one line."""
    source = _Tensors(attention, tokens)
    return Widget(source, "", _lang(lang, "".join(source.meta["tokens"])), layer, head)
