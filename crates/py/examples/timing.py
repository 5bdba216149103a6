"""How long the notebook widget takes on a long text, natively, in the kernel: the first
`attnlab.show` (the forward and every head pooled), then four edits at the end (each reusing
the earlier positions and pooling only the changed rows), then another head picked.

    python3 crates/py/examples/timing.py MODEL TEXT_FILE

with the package installed in that python (the test command's target/py-venv has it), e.g.
MODEL = target/models/SmolLM2-135M-Instruct.Q4_1.gguf, TEXT_FILE = tools/long/long-en.txt.
"""

import sys
import time

import attnlab

model = attnlab.load(sys.argv[1])
text = open(sys.argv[2], encoding="utf-8").read()
started = time.perf_counter()
widget = attnlab.show(model, text, layer=min(18, model.n_layer - 1))
print(f"show: {widget.meta['dims']['t']} tokens in {time.perf_counter() - started:.1f} s")
edits = []
for extra in [" and", " and the", " and the end", " and the end."]:
    started = time.perf_counter()
    widget.text = text + extra
    edits.append(time.perf_counter() - started)
    assert widget.run.incremental, "an edit at the end reuses the earlier positions"
print("edits at the end:", ", ".join(f"{x:.2f}" for x in edits), "s")
started = time.perf_counter()
widget.head = (widget.head + 1) % model.n_head
print(f"another head: {time.perf_counter() - started:.3f} s")
