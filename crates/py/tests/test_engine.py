"""The Python package's numbers against the CLI's (`attnlab … --format json`) and against
Hugging Face transformers' (the fixtures of tools/hf/make_fixtures.py), and its errors.

Needs the CLI built (`cargo build -p attnlab-cli`; `ATTNLAB_CLI` names another binary).
SmolLM2's tests run when `ATTNLAB_SMOLLM2` names its GGUF (the test command's
`ensure_smollm2` sets it), and are skipped otherwise.
"""

import json
import os
import pathlib
import shutil
import struct
import subprocess

import numpy as np
import pytest

import attnlab

ROOT = pathlib.Path(__file__).resolve().parents[3]
CLI = os.environ.get("ATTNLAB_CLI", str(ROOT / "target" / "debug" / "attnlab"))
HF = ROOT / "crates" / "model" / "tests" / "data" / "hf"
FIXTURE = HF / "llama-gqa-tied"
SMOLLM2 = os.environ.get("ATTNLAB_SMOLLM2")
# the lesson's sentence (../shared/seed/lesson-ko.txt) and its English one
LESSON_KO = "나는 어제 산 커피를 오늘 마셨다"
LESSON_EN = "Which do you like better, coffee or tea?"


def cli(model, *args):
    cmd = [CLI]
    if model is not None:
        cmd += ["--model", str(model)]
    out = subprocess.run(cmd + list(args), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def bundled():
    return attnlab.load()


@pytest.fixture(scope="module")
def fixture_model():
    return attnlab.load(FIXTURE)


def masked_from_json(rows):
    return np.array([[-np.inf if v is None else v for v in row] for row in rows], dtype=np.float32)


def same_as_cli_trace(model, path, text, cli_flags=(), **options):
    """Every head's four maps, the attention tensor and the next tokens equal the CLI's."""
    run = model.run(text, **options)
    doc = cli(path, "trace", text, "--format", "json", *cli_flags)
    assert run.tokens == [t["display"] for t in doc["tokens"]]
    assert run.ids == [t["id"] for t in doc["tokens"]]
    assert (run.n_layer, run.n_head, run.t) == (
        doc["dims"]["n_layer"],
        doc["dims"]["n_head"],
        doc["dims"]["t"],
    )
    attention = run.attention
    assert attention.shape == (run.n_layer, run.n_head, run.t, run.t)
    assert attention.dtype == np.float32
    assert len(doc["heads"]) == run.n_layer * run.n_head
    for h in doc["heads"]:
        head = run.head(h["layer"], h["head"])
        # the CLI prints each f32 exactly; read back as float32 it is the same number
        for name in ("scores", "scaled", "weights"):
            want = np.array(h[name], dtype=np.float32)
            assert np.array_equal(getattr(head, name), want), (h["layer"], h["head"], name)
        assert np.array_equal(head.masked, masked_from_json(h["masked"]))
        assert np.array_equal(attention[h["layer"], h["head"]], head.weights)
    top = run.top(5)
    assert [t["id"] for t in top] == [t["id"] for t in doc["next"]]
    assert [t["display"] for t in top] == [t["display"] for t in doc["next"]]
    assert np.allclose([t["prob"] for t in top], [t["prob"] for t in doc["next"]], rtol=0, atol=0)
    return run


def test_bundled_model_equals_the_cli(bundled):
    run = same_as_cli_trace(bundled, None, LESSON_KO)
    # the run's own sense: rows sum to 1, the causal mask hides the future
    w = run.attention
    assert np.allclose(w.sum(-1), 1.0, atol=1e-5)
    assert np.all(np.triu(w[0, 0], 1) == 0)
    assert np.all(np.isneginf(run.head(0, 0).masked[np.triu_indices(run.t, 1)]))
    # the probabilities are the softmax of the logits
    p = np.exp(run.logits - run.logits.max())
    assert np.allclose(p / p.sum(), run.probs, atol=1e-6)


def test_options_equal_the_cli_flags(bundled):
    same_as_cli_trace(
        bundled,
        None,
        LESSON_KO,
        ("--temperature", "0.5", "--no-scale", "--ablate", "0.1,2.3"),
        temperature=0.5,
        unscaled=True,
        heads_off=[(0, 1), (2, 3)],
    )
    run = same_as_cli_trace(bundled, None, "커피를 오늘", ("--no-mask",), no_mask=True)
    assert np.all(run.attention[0, 0][0, 1:] > 0)  # the first token sees the future


def test_a_llama_fixture_equals_the_cli(fixture_model):
    same_as_cli_trace(fixture_model, FIXTURE, "I like coffee, but my friend likes tea.")
    same_as_cli_trace(
        fixture_model,
        FIXTURE,
        "I like coffee, but my friend likes tea.",
        ("--temperature", "2", "--ablate", "1.2"),
        temperature=2.0,
        heads_off=[(1, 2)],
    )


def read_safetensors(path):
    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        dtype = {"F32": "<f4", "I64": "<i8"}[meta["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + a : 8 + n + b], dtype=dtype).reshape(meta["shape"])
    return out


def test_attention_equals_transformers(fixture_model):
    """transformers' eager attention and logits on the fixture's ids (an independent
    implementation; grouped-query attention, a tied output head), read through the package."""
    want = read_safetensors(FIXTURE / "expected.safetensors")
    model = fixture_model
    run = model.run(want["ids"])
    assert run.ids == want["ids"].tolist()
    got = run.attention
    for layer in range(run.n_layer):
        assert np.abs(got[layer] - want[f"attn.{layer}"]).max() < 1e-5, layer
    logits = want["logits"][-1]
    assert np.abs(run.logits - logits).max() < 2e-5 * max(1.0, np.abs(logits).max())


def test_roles_lens_and_generation_equal_the_cli(bundled, fixture_model):
    for model, path, text in ((bundled, None, LESSON_KO), (fixture_model, FIXTURE, "I like coffee, but my friend likes tea.")):
        doc = cli(path, "heads", text, "--format", "json", "--probe-len", "12")
        assert model.heads(text, probe_len=12, report=True) == doc
        rows = model.heads(text, probe_len=12)
        assert len(rows) == model.n_layer * model.n_head
        assert rows[5] == {"layer": 5 // model.n_head, "head": 5 % model.n_head, "role": doc["heads"][5]["role"], **doc["heads"][5]["scores"]}
        assert model.lens(text, top=3) == cli(path, "lens", text, "--format", "json", "--top", "3")
        assert model.lens(text, 1) == cli(path, "lens", text, "--format", "json", "--pos", "1")
        assert model.generate(text, 5, greedy=True) == cli(path, "generate", text, "--format", "json", "--steps", "5", "--greedy")
        sampled = cli(path, "generate", text, "--format", "json", "--steps", "4", "--temperature", "0.8", "--top-k", "20", "--seed", "7")
        assert model.generate(text, 4, temperature=0.8, top_k=20, seed=7) == sampled


def test_a_long_text_refuses_the_whole_tensor_but_gives_a_head(bundled):
    run = bundled.run(LESSON_KO * 4)
    with pytest.raises(ValueError, match=r"run.head\(layer, head\)"):
        run.attention_array(max_bytes=1000)
    assert run.head(3, 3).weights.shape == (run.t, run.t)


@pytest.mark.skipif(not SMOLLM2, reason="ATTNLAB_SMOLLM2 names no GGUF")
def test_smollm2_equals_the_cli():
    model = attnlab.load(SMOLLM2)
    assert model.info["architecture"] == "llama" and model.info["n_kv_head"] == 3
    run = model.run("The capital of France is")
    assert run.top(1)[0]["display"] == "␣Paris"
    doc = cli(SMOLLM2, "trace", LESSON_EN, "--layer", "18", "--head", "6", "--format", "json")
    head = model.run(LESSON_EN).head(18, 6)
    assert np.array_equal(head.weights, np.array(doc["heads"][0]["weights"], dtype=np.float32))
    assert np.array_equal(head.masked, masked_from_json(doc["heads"][0]["masked"]))


def test_bad_paths_raise_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        attnlab.load(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="config.json"):
        attnlab.load(tmp_path)  # an empty folder
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(ValueError, match="not a folder nor a .gguf file"):
        attnlab.load(notes)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\xff" * 40)
    with pytest.raises(ValueError, match="GGUF"):
        attnlab.load(bad)
    broken = tmp_path / "broken"
    shutil.copytree(ROOT / "assets" / "model", broken)
    (broken / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="safetensors"):
        attnlab.load(broken)
    with pytest.raises(TypeError):
        attnlab.load(42)


def test_bad_texts_and_options_raise_clear_errors(bundled):
    with pytest.raises(ValueError, match="no tokens"):
        bundled.run("")
    with pytest.raises(TypeError, match="text must be a str"):
        bundled.lens(None)
    with pytest.raises(UnicodeEncodeError):  # a ValueError: a lone surrogate is no text
        bundled.run("\ud800")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        bundled.run([1, 2, 10**6])
    with pytest.raises(ValueError, match="1-D"):
        bundled.run([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="temperature"):
        bundled.run("tea", temperature=0)
    with pytest.raises(ValueError, match="temperature"):
        bundled.heads(None, temperature=0)  # the probe alone would not check it
    with pytest.raises(ValueError, match="cannot ablate head 9.9"):
        bundled.run("tea", heads_off=[(9, 9)])
    with pytest.raises(ValueError, match="pairs"):
        bundled.run("tea", heads_off=[(1,)])
    with pytest.raises(ValueError, match="no head 7.0"):
        bundled.run("tea").head(7, 0)
    with pytest.raises(ValueError, match="past the text"):
        bundled.lens("tea", pos=50)
    with pytest.raises(ValueError, match="steps"):
        bundled.generate("tea", 0)
    with pytest.raises(ValueError, match="top_p|top-p"):
        bundled.generate("tea", 2, top_p=1.5)


def test_a_run_after_an_edit_reuses_the_earlier_positions(bundled, fixture_model):
    for model, text in ((bundled, LESSON_KO), (fixture_model, "I like coffee, but my friend likes tea.")):
        first = model.run(text)
        assert not first.incremental
        longer = model.run(text + " and", prev=first)
        assert longer.incremental
        fresh = model.run(text + " and")
        assert np.abs(longer.attention - fresh.attention).max() < 1e-5
        assert np.abs(longer.logits - fresh.logits).max() < 1e-4
        assert longer.top(3)[0]["id"] == fresh.top(3)[0]["id"]
        # another text (nothing shared at the start) or other options: nothing reused
        other = " ".join(reversed(text.split()))
        assert model.tokenize(other)[0]["id"] != first.ids[0]
        assert not model.run(other, prev=first).incremental
        assert not model.run(text, prev=first, temperature=0.5).incremental
    # a run of another model is not mixed in
    assert not bundled.run(LESSON_KO, prev=fixture_model.run("Which do you like better?")).incremental
    with pytest.raises(TypeError, match="attnlab.Run"):
        bundled.run(LESSON_KO, prev="run")


def test_a_progress_callback_hears_every_block(bundled, capsys):
    heard = []
    bundled.run(LESSON_KO, progress=lambda done, total: heard.append((done, total)))
    assert heard == [(l + 1, bundled.n_layer) for l in range(bundled.n_layer)]
    # a callback that raises does not stop the run
    run = bundled.run(LESSON_KO, progress=lambda done, total: 1 / 0)
    assert run.t > 0
    # the bar: drawn only past its delay (here none), on stderr, one line
    bar = attnlab.ProgressBar(after=0)
    bundled.run(LESSON_KO, progress=bar)
    bar.close()
    err = capsys.readouterr().err
    assert err.endswith(f"{bundled.n_layer}/{bundled.n_layer} layers\n") and "[" in err
    with pytest.raises(TypeError, match="progress"):
        bundled.run(LESSON_KO, progress=5)
