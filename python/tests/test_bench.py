"""The benchmark's measurements run (few steps here; `npm run bench:python` runs the real ones)."""

import re

import pytest

from cerealbar.bench import batched, fast_lines, fast_logs_line, frames_lines, single
from cerealbar.envs import FollowerEnv


def test_the_benchmark_steps_one_env_and_a_batch_through_game_ends():
    env = FollowerEnv(description=False, max_steps=50)
    try:
        # 300 steps of at most 50 per episode: several resets along the way.
        assert single(env, 300, 5, seed=1) > 0
    finally:
        env.close()
    # Seed 139765's game ends before the follower's first turn: the batch skips it.
    assert batched(4, 60, seed=139765) > 0


def test_the_fast_benchmark_prints_a_line_for_each_number_of_processes():
    pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environments are not measured")
    one, two = fast_lines(4, 30, seed=1, processes=[1, 2])
    assert re.fullmatch(r"python vector env N=4: \d{1,3}(,\d{3})* steps/s = \d+\.\dx FollowerVectorEnv", one), one
    assert re.fullmatch(r"python vector env N=4, 2 processes: \d{1,3}(,\d{3})* steps/s = \d+\.\dx FollowerVectorEnv", two), two


def test_the_fast_benchmark_on_levels_prints_its_line():
    pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environments are not measured")
    (line,) = fast_lines(4, 30, seed=1, processes=[1], levels=6)
    assert re.fullmatch(r"python vector env N=4, 6 levels: \d{1,3}(,\d{3})* steps/s = \d+\.\dx FollowerVectorEnv", line), line


def test_the_fast_benchmark_measures_logged_episodes_with_logs(selfplay_logs):
    pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environments are not measured")
    line = fast_logs_line(4, 30, seed=1, logs=str(selfplay_logs))
    assert re.fullmatch(r"python vector env N=4, logged episodes \(ndtw\): \d{1,3}(,\d{3})* steps/s", line), line
    line = fast_logs_line(4, 30, seed=1, logs=str(selfplay_logs), processes=2)
    assert re.fullmatch(r"python vector env N=4, logged episodes \(ndtw\), 2 processes: \d{1,3}(,\d{3})* steps/s", line), line


def test_the_frames_benchmark_prints_its_two_lines(stand_in_renderer):
    # A stand-in renderer (no browser): the lines' form, not the real rates (npm run bench:python -- --frames).
    stand_in_renderer("ok")
    rendered, pixels = frames_lines(5, (32, 24), seed=1)
    assert re.fullmatch(r"FollowerEnv rgb_array, first-person 32x24: [\d,]+\.\d frames/s \(\d+\.\d ms a render\(\) after a step; the renderer's start and first frame \d+\.\d s\)", rendered), rendered
    assert re.fullmatch(r"FollowerEnv observation_mode='pixels', first-person 32x24: [\d,]+\.\d steps/s", pixels), pixels
