"""docs/python.md's examples run as written."""

from __future__ import annotations

import runpy

import numpy as np
import pytest

from conftest import REPO


def test_the_training_loop_example_runs(tmp_path):
    example = python_block_after("## A training loop")
    script = tmp_path / "training_loop.py"
    script.write_text(example)
    namespace = runpy.run_path(str(script))
    assert namespace["weights"].shape == (5, 4) and namespace["weights"].any()


def test_the_ppo_example_runs_on_the_fast_vector_env(tmp_path):
    pytest.importorskip("gymnasium", reason="gymnasium is not importable: the PPO example is not run")
    script = tmp_path / "ppo.py"
    script.write_text(python_block_after("**With many games at once: PPO.**"))
    namespace = runpy.run_path(str(script))
    # 8 rollouts of 32 steps of 64 games: episodes ended and restarted, and both models learned something.
    assert namespace["ENDED"].any() and not namespace["VALID"].all()
    assert np.isfinite(namespace["W"]).all() and namespace["W"].any() and namespace["w"].any()


def python_block_after(heading: str) -> str:
    text = (REPO / "docs" / "python.md").read_text()
    return text.split(heading, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]


def test_the_vector_and_pettingzoo_examples_run(tmp_path):
    for heading, needs in (
        ("**Many environments in one process.**", "gymnasium"),
        ("**Many environments, fast: `FastFollowerVectorEnv`.**", "gymnasium"),
        ("**Both players: PettingZoo.**", "pettingzoo"),
    ):
        pytest.importorskip(needs, reason=f"{needs} is not importable: its example is not run")
        script = tmp_path / "example.py"
        script.write_text(python_block_after(heading))
        namespace = runpy.run_path(str(script))
        assert namespace["env" if needs == "pettingzoo" else "envs"] is not None


def test_the_rendering_examples_run(tmp_path):
    if not (REPO / "client" / "dist" / "frames" / "index.html").is_file():
        pytest.skip("client/dist/frames/index.html is missing: run `npm run build:client` to run the frame examples")
    section = (REPO / "docs" / "python.md").read_text().split("## Rendering and pixels", 1)[1].split("\n## ", 1)[0]
    blocks = [block.split("```", 1)[0] for block in section.split("```python\n")[1:]]
    assert len(blocks) == 2
    script = tmp_path / "frames.py"
    script.write_text(blocks[0])
    namespace = runpy.run_path(str(script))
    assert namespace["eyes"].shape == namespace["known"].shape == (120, 160, 3)
    script.write_text(blocks[1])
    namespace = runpy.run_path(str(script))
    assert namespace["image"].shape == (84, 84, 3) and namespace["observation"]["image"].dtype == np.uint8
