"""attnlab in Python: the CPU reference engine of attnlab (the same Rust code as its CLI and
its browser worker), with numpy arrays out.

    >>> import attnlab
    >>> model = attnlab.load()                 # the bundled teaching model
    >>> run = model.run("커피와 차 중에 무엇을 더 좋아하세요?")
    >>> run.attention.shape                    # (layers, heads, T, T)
    >>> run.head(0, 1).weights                 # one head's softmax(QKᵀ/√d_k) rows
    >>> run.top(5)                             # the likeliest next tokens
    >>> attnlab.show(model, "커피를 마셨다")       # the live views in a notebook cell
    >>> attnlab.view(attentions, tokens)       # attention computed elsewhere (bertviz-style)

`attnlab.load(path)` reads what the CLI's `--model` reads: a folder (GPT-2 layout, or a
Hugging Face Llama / Mistral / Qwen2 folder) or a `.gguf` file (e.g. SmolLM2).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Callable, Iterable, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _native

__all__ = ["load", "show", "view", "Model", "Run", "Head", "ProgressBar"]
__version__ = _native.VERSION

PROBE_LEN = _native.PROBE_LEN
PROBE_SEED = _native.PROBE_SEED


def load(path: Union[str, os.PathLike, None] = None) -> "Model":
    """The model at `path` (a folder or a .gguf file), or the bundled teaching model.

    Raises FileNotFoundError when the path does not exist and ValueError when it is not a
    model attnlab reads (with what is wrong with it).
    """
    if path is not None:
        path = os.fspath(path)
        if not isinstance(path, str):
            raise TypeError(f"path must be a str or os.PathLike of str, not {type(path).__name__}")
    return Model(_native.Model.load(path))


def _floats(raw: bytearray, shape: Sequence[int]) -> np.ndarray:
    # a writable float32 array over the bytearray Rust filled: no copy
    return np.frombuffer(raw, dtype="<f4").reshape(shape)


def _text(text: object) -> str:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, not {type(text).__name__}")
    text.encode("utf-8")  # a lone surrogate is no text: UnicodeEncodeError, a ValueError
    return text


def _ids(ids: object) -> list:
    arr = np.asarray(ids)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(
            f"token ids must be a str or a 1-D sequence of ints, got shape {arr.shape} of {arr.dtype}"
        )
    if arr.size and (arr.min() < 0 or arr.max() >= 2**32):
        raise ValueError("token ids must be ≥ 0 and < 2³²")
    return [int(i) for i in arr]


def _heads_off(heads_off: Iterable) -> list:
    out = []
    for pair in heads_off:
        try:
            layer, head = pair
            layer, head = int(layer), int(head)
        except (TypeError, ValueError):
            raise ValueError(f"heads_off takes (layer, head) pairs of integers, got {pair!r}") from None
        if layer < 0 or head < 0:
            raise ValueError(f"heads_off: no head ({layer}, {head}); layers and heads count from 0")
        out.append((layer, head))
    return out


def _options(temperature: float, unscaled: bool, no_mask: bool, heads_off: Iterable) -> dict:
    return {
        "temperature": float(temperature),
        "unscaled": bool(unscaled),
        "no_mask": bool(no_mask),
        "heads_off": _heads_off(heads_off),
    }


def _index(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be ≥ 0, got {value}")
    return int(value)


class ProgressBar:
    """A bar over a forward's layers on stderr (a notebook cell shows it as it moves), drawn
    once the run has taken half a second."""

    def __init__(self, after: float = 0.5):
        self.started = time.perf_counter()
        self.after = after
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if time.perf_counter() - self.started < self.after:
            return
        width = 30
        full = width * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * full}{'.' * (width - full)}] {done}/{total} layers")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        """Ends the bar's line (once, and only if it was drawn)."""
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.drawn = False


class Head(NamedTuple):
    """One head of a run: its four maps (T × T) and its vectors (T × d_k).

    `masked` holds −inf where the causal mask hides a key; `weights` rows sum to 1.
    """

    layer: int
    head: int
    scores: np.ndarray
    scaled: np.ndarray
    masked: np.ndarray
    weights: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    out: np.ndarray


class Run:
    """One forward pass over a text. Only what grows with the text's length is kept; a head's
    maps are computed when asked (`head`, `attention`)."""

    def __init__(self, native: "_native.Run"):
        self._r = native
        self.token_info: list = json.loads(native.tokens())
        self.n_layer, self.n_head, self.t, self.d_k, self.vocab = native.dims()
        self.options: dict = json.loads(native.options())
        self._attention = None

    @property
    def tokens(self) -> list:
        """The tokens run, as display strings (whitespace made visible)."""
        return [t["display"] for t in self.token_info]

    @property
    def ids(self) -> list:
        return [t["id"] for t in self.token_info]

    @property
    def incremental(self) -> bool:
        """Whether positions were reused from the run given as `prev`."""
        return self._r.incremental()

    @property
    def dropped(self) -> int:
        """How many tokens at the start were dropped to fit the model's context."""
        return self._r.dropped()

    def head(self, layer: int, head: int) -> Head:
        """One head's QKᵀ, ÷√d_k, masked and softmax maps, and its q, k, v and output."""
        layer, head = _index(layer, "layer"), _index(head, "head")
        raw = self._r.head(layer, head)
        t, dk = self.t, self.d_k
        maps = [_floats(b, (t, t)) for b in raw[:4]]
        vectors = [_floats(b, (t, dk)) for b in raw[4:]]
        return Head(layer, head, *maps, *vectors)

    def attention_array(self, max_bytes: int = 1 << 30) -> np.ndarray:
        """Every head's weights, (layers, heads, T, T); refused past `max_bytes`."""
        raw = self._r.attention(_index(max_bytes, "max_bytes"))
        return _floats(raw, (self.n_layer, self.n_head, self.t, self.t))

    @property
    def attention(self) -> np.ndarray:
        """Every head's weights, (layers, heads, T, T) float32, computed on first use and kept;
        a ValueError past 1 GiB (use `head(layer, head)`, or `attention_array(max_bytes=…)`)."""
        if self._attention is None:
            self._attention = self.attention_array()
        return self._attention

    @property
    def logits(self) -> np.ndarray:
        """The next-token logits after the last token, (vocabulary,)."""
        return _floats(self._r.logits(), (self.vocab,))

    @property
    def probs(self) -> np.ndarray:
        """The next-token probabilities after the last token, (vocabulary,)."""
        return _floats(self._r.probs(), (self.vocab,))

    def top(self, k: int = 5) -> list:
        """The `k` likeliest next tokens: [{"id", "display", "prob"}]."""
        return json.loads(self._r.top(_index(k, "k")))

    def __repr__(self) -> str:
        return f"<attnlab.Run: {self.t} tokens, {self.n_layer} layers × {self.n_head} heads>"


class Model:
    """A model and its tokenizer (`attnlab.load`)."""

    def __init__(self, native: "_native.Model"):
        self._m = native
        self.info: dict = json.loads(native.info())

    n_layer = property(lambda self: self.info["n_layer"])
    n_head = property(lambda self: self.info["n_head"])
    context = property(lambda self: self.info["context"])

    def tokenize(self, text: str) -> list:
        """The text's tokens: [{"id", "display", "piece", "span", "partial"}]."""
        return json.loads(self._m.tokenize(_text(text)))

    def run(
        self,
        text: Union[str, Sequence[int], np.ndarray],
        *,
        temperature: float = 1.0,
        unscaled: bool = False,
        no_mask: bool = False,
        heads_off: Iterable = (),
        prev: Optional["Run"] = None,
        progress: Union[bool, Callable[[int, int], object]] = False,
    ) -> Run:
        """A forward pass over `text` (a str, or token ids as a list or 1-D array of ints):
        `temperature` is the attention softmax's τ, `unscaled` skips the
        ÷√d_k, `no_mask` lets tokens look ahead, `heads_off` switches (layer, head) pairs off
        (the CLI's --temperature, --no-scale, --no-mask, --ablate). `prev`, an earlier run of
        this model: the positions the two share at the start are reused, not computed again
        (`Run.incremental` says whether they were) — an edit at the end of a long text costs
        one position. `progress=True` draws a bar over the layers on stderr when the run takes
        more than half a second; a callable gets (layers done, layers) after each block."""
        opts = _options(temperature, unscaled, no_mask, heads_off)
        if prev is not None and not isinstance(prev, Run):
            raise TypeError(f"prev must be an attnlab.Run, not {type(prev).__name__}")
        native_prev = None if prev is None else prev._r
        source = _text(text) if isinstance(text, str) else _ids(text)
        bar = ProgressBar() if progress is True else (progress or None)
        if bar is not None and not callable(bar):
            raise TypeError("progress must be True, False or a callable(done, total)")
        try:
            return Run(self._m.run(source, **opts, prev=native_prev, progress=bar))
        finally:
            if isinstance(bar, ProgressBar):
                bar.close()

    def heads(
        self,
        texts: Union[str, Sequence[str], None] = None,
        *,
        probe_len: int = PROBE_LEN,
        seed: int = PROBE_SEED,
        temperature: float = 1.0,
        unscaled: bool = False,
        no_mask: bool = False,
        heads_off: Iterable = (),
        report: bool = False,
    ) -> Union[list, dict]:
        """Every head's role scores, one dict per head: layer, head, role (the strongest
        above its threshold, or None) and each role's score. Text roles come from `texts`
        (averaged), induction and duplicate-token from a repeated random-token probe. With
        `report=True`, the whole document of `attnlab heads --format json`."""
        if texts is None:
            texts = []
        elif isinstance(texts, str):
            texts = [texts]
        else:
            texts = [_text(t) for t in texts]
        opts = _options(temperature, unscaled, no_mask, heads_off)
        doc = json.loads(
            self._m.heads(texts, _index(probe_len, "probe_len"), _index(seed, "seed"), **opts)
        )
        if report:
            return doc
        return [
            {"layer": h["layer"], "head": h["head"], "role": h["role"], **h["scores"]}
            for h in doc["heads"]
        ]

    def lens(
        self,
        text: str,
        pos: Optional[int] = None,
        *,
        top: int = 5,
        temperature: float = 1.0,
        unscaled: bool = False,
        no_mask: bool = False,
        heads_off: Iterable = (),
    ) -> dict:
        """The logit lens at `pos` (default: the last token): the residual stream after the
        embedding and each block, through the final norm and the output head."""
        pos = None if pos is None else _index(pos, "pos")
        opts = _options(temperature, unscaled, no_mask, heads_off)
        return json.loads(self._m.lens(_text(text), pos, _index(top, "top"), **opts))

    def generate(
        self,
        text: str,
        steps: int = 16,
        *,
        temperature: float = 1.0,
        top_k: Optional[int] = None,
        top_p: Optional[float] = None,
        seed: int = 0,
        greedy: bool = False,
    ) -> dict:
        """`steps` tokens appended to `text`: greedy, or sampled with an output temperature
        and top-k / top-p from `seed`. Returns {"generated", "full_text", "hit_context", …}."""
        top_k = None if top_k is None else _index(top_k, "top_k")
        return json.loads(
            self._m.generate(
                _text(text),
                _index(steps, "steps"),
                float(temperature),
                top_k,
                None if top_p is None else float(top_p),
                _index(seed, "seed"),
                bool(greedy),
            )
        )

    def __repr__(self) -> str:
        i = self.info
        return (
            f"<attnlab.Model {i['architecture']} from {i['source']}: {i['n_layer']} layers × "
            f"{i['n_head']} heads (d_k {i['d_k']}), context {i['context']}>"
        )


def __getattr__(name: str):
    # the widgets load anywidget (and with it ipywidgets) only when asked for
    if name in ("show", "view", "Widget"):
        from . import widget

        return getattr(widget, name)
    raise AttributeError(f"module 'attnlab' has no attribute {name!r}")
