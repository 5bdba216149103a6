"""The widgets' kernel side: what `show` sends equals the CLI's numbers (`attnlab
thumbnails`, `attnlab trace`), `view` pools as the engine does and refuses bad input clearly,
editing the text reruns, and the saved HTML file is standalone. (Their drawing is tested in
a real JupyterLab: web/e2e/notebook.test.mjs.)"""

import json
import re

import numpy as np
import pytest

import attnlab
from attnlab.widget import pool

from test_engine import CLI, LESSON_KO, cli  # noqa: F401  (the CLI's path is checked there)


@pytest.fixture(scope="module")
def model():
    return attnlab.load()


def floats(b):
    return np.frombuffer(b, dtype="<f4")


def test_show_sends_the_clis_thumbnails_and_head(model):
    w = attnlab.show(model, LESSON_KO, layer=2, head=1)
    m = w.meta
    assert m["kind"] == "engine" and m["lang"] == "ko" and m["error"] is None
    doc = cli(None, "thumbnails", LESSON_KO)
    assert m["span"] == doc["span"] and m["cells"] == doc["cells"]
    thumbs = floats(w.thumbs).reshape(m["dims"]["n_layer"], m["dims"]["n_head"], m["cells"], m["cells"])
    for h in doc["heads"]:
        assert np.array_equal(thumbs[h["layer"], h["head"]], np.array(h["weights"], dtype=np.float32))
        roles = m["roles"][h["layer"] * m["dims"]["n_head"] + h["head"]]
        for code, score in h["roles"].items():
            assert roles.get(code) == (None if score is None else pytest.approx(score, abs=0, rel=1e-7))
    t, dk = m["dims"]["t"], m["dims"]["d_k"]
    maps = floats(w.maps)
    assert maps.size == 4 * t * t + 2 * t * dk
    trace = cli(None, "trace", LESSON_KO, "--layer", "2", "--head", "1", "--format", "json")["heads"][0]
    assert np.array_equal(maps[3 * t * t : 4 * t * t].reshape(t, t), np.array(trace["weights"], dtype=np.float32))
    assert [n["display"] for n in m["next"]][:5] == [n["display"] for n in cli(None, "predict", LESSON_KO, "--format", "json", "--top", "5")["next"]]


def test_editing_the_text_reruns_and_a_bad_text_keeps_the_last_result(model):
    w = attnlab.show(model, "나는 어제", lang="en")
    assert w.meta["lang"] == "en"
    t0 = w.meta["dims"]["t"]
    w.text = LESSON_KO
    assert w.meta["dims"]["t"] > t0 and w.meta["tokens"] == w.run.tokens
    assert w.run.incremental  # typed at the end: the earlier positions reused
    # the grid's thumbnails, pooled row by row as the text grew, are a fresh run's
    doc = cli(None, "thumbnails", LESSON_KO)
    thumbs = floats(w.thumbs).reshape(-1, doc["cells"], doc["cells"])
    for k, h in enumerate(doc["heads"]):
        assert np.abs(thumbs[k] - np.array(h["weights"], dtype=np.float32)).max() < 1e-6
    w.head = 3
    t = w.meta["dims"]["t"]
    assert np.array_equal(floats(w.maps)[3 * t * t : 4 * t * t].reshape(t, t), w.run.head(0, 3).weights)
    w.text = ""
    assert "no tokens" in w.meta["error"]
    assert w.meta["dims"]["t"] == t  # the last result stays


def test_pooling_for_view_equals_the_engines():
    model = attnlab.load()
    run = model.run(LESSON_KO * 12)  # more than 64 tokens: cells pool 2 × 2 positions or more
    assert run.t > 64
    span, cells, raw, _ = run._r.thumbnails(64)
    got_span, got_cells, pooled = pool(run.attention)
    assert (got_span, got_cells) == (span, cells) and span >= 2
    assert np.abs(pooled.ravel() - floats(raw)).max() < 1e-6


def test_view_takes_hugging_face_shapes_and_gives_the_engines_roles(model):
    run = model.run(LESSON_KO)
    per_layer = tuple(run.attention[l][None] for l in range(run.n_layer))  # output_attentions
    for given in (run.attention, per_layer, list(run.attention)):
        v = attnlab.view(given, run.tokens)
        assert v.meta["kind"] == "tensor" and v.meta["dims"]["t"] == run.t
        assert np.array_equal(floats(v.maps).reshape(run.t, run.t), run.attention[0, 0])
    shown = attnlab.show(model, LESSON_KO)
    for a, b in zip(v.meta["roles"], shown.meta["roles"]):
        for code in ("previous", "first", "self", "broad", "local"):
            assert (a.get(code) is None) == (b.get(code) is None)
            if a.get(code) is not None:
                assert abs(a[code] - b[code]) < 1e-6
    assert v.meta["options"]["causal_mask"] is True
    assert attnlab.view(np.ones((1, 1, 3, 3)) / 3, ["a", "b", "c"]).meta["options"]["causal_mask"] is False


@pytest.mark.parametrize(
    "attention, tokens, message",
    [
        (np.zeros((4, 4)), ["a"] * 4, "must be \\[layers, heads, T, T\\]"),
        (np.zeros((1, 2, 3, 4)), ["a"] * 3, "must be \\[layers, heads, T, T\\]"),
        (np.zeros((1, 2, 3, 3)), ["a"] * 4, "4 tokens for attention over 3 positions"),
        (np.zeros((1, 2, 3, 3)), "abc", "list of str"),
        (np.zeros((1, 2, 3, 3)), [1, 2, 3], "list of str"),
        ([], [], "empty sequence"),
        ([np.zeros((2, 3, 3)), np.zeros((2, 4, 4))], ["a"] * 3, "shapes differ"),
        ([np.zeros((3, 3))], ["a"] * 3, "each layer must be"),
        (np.full((1, 1, 2, 2), np.nan), ["a", "b"], "NaN"),
        (np.zeros((1, 1, 0, 0)), [], "nothing to show"),
    ],
)
def test_view_refuses_bad_input_clearly(attention, tokens, message):
    with pytest.raises(ValueError, match=message):
        attnlab.view(attention, tokens)


def test_show_refuses_bad_arguments(model):
    with pytest.raises(TypeError, match="attnlab.Model"):
        attnlab.show("model", "text")
    with pytest.raises(ValueError, match="no head"):
        attnlab.show(model, "text", layer=4)
    with pytest.raises(ValueError, match="lang"):
        attnlab.show(model, "text", lang="fr")
    with pytest.raises(ValueError, match="no tokens"):
        attnlab.show(model, "")


def test_save_html_is_one_standalone_file(model, tmp_path):
    w = attnlab.show(model, LESSON_KO)
    path = w.save_html(tmp_path / "a.html")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    # nothing to fetch: no URL but the SVG namespace the widget's exporter writes
    urls = set(re.findall(r"https?://[^\s\"'<>)\\]+", page))
    assert urls <= {"http://www.w3.org/2000/svg"}, urls
    state = json.loads(re.search(r"const state = (\{.*?\});\n", page).group(1))
    n = model.n_layer * model.n_head
    assert len(state["maps"]) == n  # every head's numbers, as they fit
    assert state["meta"]["static"] is True


def test_a_long_text_sends_the_last_row_not_the_whole_maps(model, monkeypatch):
    import attnlab.widget as widget

    monkeypatch.setattr(widget, "WHOLE_MAP", 4)  # as a text past 2,048 positions would
    w = attnlab.show(model, LESSON_KO, layer=1, head=2)
    t, dk = w.meta["dims"]["t"], w.meta["dims"]["d_k"]
    assert t > 4
    maps = floats(w.maps)
    assert maps.size == 4 * t + 2 * t * dk
    head = w.run.head(1, 2)
    assert np.array_equal(maps[3 * t : 4 * t], head.weights[-1])
    assert np.array_equal(maps[2 * t : 3 * t], head.masked[-1])
    assert np.array_equal(maps[4 * t : 4 * t + t * dk].reshape(t, dk), head.v)


def test_a_text_past_the_context_says_what_was_dropped(model):
    w = attnlab.show(model, LESSON_KO * 40)
    assert w.meta["dims"]["t"] == model.context and w.meta["dropped"] > 0
    assert w.run.dropped == w.meta["dropped"]


def test_sizes_from_python_never_abort_the_kernel(model):
    run = model.run(LESSON_KO)
    span, cells, raw, _ = run._r.thumbnails(2**40)  # a side past T is T
    assert (span, cells) == (1, run.t)
    with pytest.raises(ValueError):
        run._r.thumbnails(0)
    with pytest.raises(ValueError, match="not 1 maps"):
        attnlab._native.text_roles(b"", 1, 2**32, False)
    with pytest.raises(ValueError, match="side"):
        pool(np.zeros((2, 2), dtype=np.float32), 0)
    with pytest.raises(ValueError):
        run.attention_array(max_bytes=-1)
    a = run.attention
    a[0, 0, 0, 0] = 5.0  # a writable array of its own
    assert run.attention is a


def test_save_html_keeps_any_token_inside_its_script(model, tmp_path):
    w = attnlab.show(model, "<!--<script> </script> 커피")
    page = w.save_html(tmp_path / "b.html").read_text(encoding="utf-8")
    script = page[page.index('<script type="module">') + len('<script type="module">') : page.rindex("</script>")]
    assert "<" not in script


def test_a_pooler_refuses_absurd_sides():
    for side in (0, 1025):
        with pytest.raises(ValueError, match="side"):
            attnlab._native.Pooler(side)
