"""docs/python.md's examples run as written."""

from __future__ import annotations

import runpy

from conftest import REPO


def test_the_training_loop_example_runs(tmp_path):
    text = (REPO / "docs" / "python.md").read_text()
    example = text.split("## A training loop", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    script = tmp_path / "training_loop.py"
    script.write_text(example)
    namespace = runpy.run_path(str(script))
    assert namespace["weights"].shape == (5, 4) and namespace["weights"].any()
