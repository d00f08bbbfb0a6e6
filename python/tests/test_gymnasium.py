"""Gymnasium conformance: its own env checker on both environments, the registered ids, spaces,
masks and a round of a synchronous vector env. Skipped where Gymnasium cannot be imported."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the Gymnasium tests are skipped")

import cerealbar  # noqa: E402  (registers the ids once gymnasium is importable)
from gymnasium.utils.env_checker import check_env  # noqa: E402

from conftest import REPO  # noqa: E402


@pytest.mark.parametrize("env_id", [cerealbar.FOLLOWER_ID, cerealbar.LEADER_ID])
def test_gymnasiums_check_env_passes_without_warnings(env_id):
    # Its render check draws an rgb_array frame with the frame renderer, which needs the built
    # client: without it, that check is skipped here (test_frames.py says so in its skips).
    frames = (REPO / "client" / "dist" / "frames" / "index.html").is_file()
    env = gymnasium.make(env_id)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            # The unwrapped env, with the spec make() gave it: check_env then also makes it with
            # every render mode and checks close().
            check_env(env.unwrapped, skip_render_check=not frames)
    finally:
        env.close()


def test_spaces_hold_what_reset_and_step_give():
    with cerealbar.FollowerEnv(reward="distance") as env:
        assert isinstance(env.action_space, gymnasium.spaces.Discrete) and env.action_space.n == 5
        env.action_space.seed(2)
        observation, info = env.reset(seed=1)
        assert observation in env.observation_space
        for _ in range(100):
            observation, _, terminated, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"]))
            assert observation in env.observation_space
            if terminated or truncated:
                break
    with cerealbar.LeaderEnv() as env:
        env.action_space.seed(3)
        observation, info = env.reset(seed=1)
        assert observation in env.observation_space
        for _ in range(100):
            # The leader's mask is a dict, as Gymnasium's Dict space takes it: sampled actions are legal.
            observation, _, terminated, truncated, info = env.step(env.action_space.sample(mask=info["action_mask"]))
            assert observation in env.observation_space and info["refused"] == ""
            if terminated or truncated:
                break
        # People write any characters: the text spaces hold them all.
        assert {**observation, "queue": "le café d’à côté 🥣"} in env.observation_space


def test_make_passes_keyword_arguments():
    env = gymnasium.make(cerealbar.FOLLOWER_ID, reward="distance", max_steps=7, description=False)
    try:
        observation, info = env.reset(seed=2)
        assert "description" not in observation and info["potential"] < 0
        for _ in range(7):
            *_, truncated, _ = env.step(2)
        assert truncated
    finally:
        env.close()


def test_a_sync_vector_env_round_with_autoreset():
    envs = gymnasium.vector.SyncVectorEnv([lambda: cerealbar.FollowerEnv(max_steps=20, description=False) for _ in range(3)])
    try:
        observations, infos = envs.reset(seed=[1, 2, 3])
        assert observations["terrain"].shape == (3, 25, 25)
        assert list(infos["episode_id"]) == ["selfplay-1", "selfplay-2", "selfplay-3"]
        ends = 0
        for t in range(45):
            observations, rewards, terminated, truncated, infos = envs.step(np.full(3, t % 4))
            assert rewards.shape == (3,) and observations["pose"].shape == (3, 3)
            ends += int((terminated | truncated).sum())
        # Each env was truncated at 20 steps, reset at its next step, and truncated again at 40.
        assert ends == 6
    finally:
        envs.close()
