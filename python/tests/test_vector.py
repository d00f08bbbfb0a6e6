"""`FollowerVectorEnv`: the same trajectories as FollowerEnvs in Gymnasium's SyncVectorEnv (same
seeds, same actions, autoresets included), from one Node process; and bad use."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environment's tests are skipped")

from cerealbar import FollowerEnv  # noqa: E402
from cerealbar.errors import EngineCrashedError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError  # noqa: E402
from cerealbar.vector import FollowerVectorEnv  # noqa: E402


def assert_same(batched, expected, what: str) -> None:
    if isinstance(batched, dict):
        assert batched.keys() == expected.keys(), what
        for key in batched:
            assert_same(batched[key], expected[key], f"{what}.{key}")
    elif isinstance(batched, tuple):
        assert tuple(batched) == tuple(expected), what
    else:
        assert np.array_equal(np.asarray(batched), np.asarray(expected)), what


@pytest.mark.parametrize("levels, seed", [(None, 11), (5, 1)])
def test_the_same_games_as_follower_envs_in_a_sync_vector_env_autoresets_included(levels, seed):
    """With `levels`, both draw every game among them."""
    n, options = 4, {"reward": "distance", "max_steps": 15, "description": True, "levels": levels}
    vector = FollowerVectorEnv(n, **options)
    sync = gymnasium.vector.SyncVectorEnv([lambda: FollowerEnv(**options) for _ in range(n)])
    try:
        assert vector.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
        assert vector.single_observation_space == sync.single_observation_space
        assert vector.action_space == sync.action_space
        observation, info = vector.reset(seed=seed)
        expected, expected_info = sync.reset(seed=seed)
        assert_same(observation, expected, "reset")
        assert list(info["episode_id"]) == list(expected_info["episode_id"]) == [f"selfplay-{seed + i}" for i in range(n)]
        rng = np.random.default_rng(3)
        ended = 0
        played = []
        for step in range(120):
            actions = rng.integers(0, 5, size=n)
            observation, rewards, terminations, truncations, info = vector.step(actions)
            expected, expected_rewards, expected_terminations, expected_truncations, expected_info = sync.step(actions)
            assert_same(observation, expected, f"step {step}")
            assert np.array_equal(rewards, expected_rewards), step
            assert np.array_equal(terminations, expected_terminations) and np.array_equal(truncations, expected_truncations), step
            assert np.array_equal(info["score"], expected_info["score"]), step
            assert vector.observation_space.contains(observation)
            if "episode_id" in info:
                assert list(info["episode_id"][info["_episode_id"]]) == list(expected_info["episode_id"][expected_info["_episode_id"]]), step
                played += list(info["episode_id"][info["_episode_id"]])
            ended += int(np.sum(terminations | truncations))
        # Episodes of at most 15 steps: many ended and were reset along the way.
        assert ended >= 20 and len(played) >= 20
        if levels is not None:
            assert {int(episode.removeprefix("selfplay-")) for episode in played} == set(range(levels))
    finally:
        vector.close()
        sync.close()


def test_an_int_seed_crossing_a_seed_with_no_game_plays_the_next_seed_after_the_others():
    """reset(seed=1185) of 8 environments: seeds 1185 to 1192, but 1189 gives no game, so its
    environment plays 1193; the same games as FollowerEnvs given those seeds (where a
    SyncVectorEnv given 1185 raises at 1189), autoresets included."""
    n, options = 8, {"reward": "distance", "max_steps": 10, "description": False}
    seeds = [1185, 1186, 1187, 1188, 1193, 1190, 1191, 1192]
    vector = FollowerVectorEnv(n, **options)
    sync = gymnasium.vector.SyncVectorEnv([lambda: FollowerEnv(**options) for _ in range(n)])
    try:
        with pytest.raises(InvalidRequestError, match="1189"):
            sync.reset(seed=1185)
        observation, info = vector.reset(seed=np.int64(1185))
        expected, expected_info = sync.reset(seed=seeds)
        assert list(info["episode_id"]) == list(expected_info["episode_id"]) == [f"selfplay-{seed}" for seed in seeds]
        assert_same(observation, expected, "reset")
        rng = np.random.default_rng(6)
        started = 0
        for step in range(40):
            actions = rng.integers(0, 5, size=n)
            result, expected_result = vector.step(actions), sync.step(actions)
            for value, expected_value in zip(result[:4], expected_result[:4]):
                assert_same(value, expected_value, f"step {step}")
            started += int(np.sum(result[4].get("_episode_id", 0)))
            if "episode_id" in result[4]:
                assert list(result[4]["episode_id"][result[4]["_episode_id"]]) == list(expected_result[4]["episode_id"][expected_result[4]["_episode_id"]])
        assert started >= 16  # episodes of at most 10 steps: each environment drew new games from its generator
    finally:
        vector.close()
        sync.close()


def test_after_the_engine_process_died_the_next_reset_starts_a_new_one():
    vector = FollowerVectorEnv(3, description=False)
    fresh = FollowerVectorEnv(3, description=False)
    try:
        vector.reset(seed=2)
        pid = vector.engine_pid
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(EngineCrashedError, match=r"exited \(code -9\)"):
            vector.step(np.zeros(3, dtype=np.int64))
        with pytest.raises(EpisodeOverError):
            vector.step(np.zeros(3, dtype=np.int64))
        observation, info = vector.reset(seed=2)
        expected, expected_info = fresh.reset(seed=2)
        assert vector.engine_pid != pid
        assert_same(observation, expected, "reset")
        assert list(info["episode_id"]) == list(expected_info["episode_id"]) == ["selfplay-2", "selfplay-3", "selfplay-4"]
        for step in range(30):
            actions = np.array([step % 5, 2, 4 - step % 5])
            for value, expected_value in zip(vector.step(actions)[:4], fresh.step(actions)[:4]):
                assert_same(value, expected_value, f"step {step}")
    finally:
        vector.close()
        fresh.close()


def test_observations_are_written_into_the_same_arrays_without_copy():
    vector = FollowerVectorEnv(2, description=False, copy=False)
    try:
        first, _ = vector.reset(seed=1)
        second, *_ = vector.step(np.array([0, 2]))
        arrays = [key for key, value in first.items() if isinstance(value, np.ndarray)]
        assert arrays and all(second[key] is first[key] for key in arrays)
    finally:
        vector.close()


def test_make_vec_builds_it_from_the_registered_id():
    import cerealbar

    vector = gymnasium.make_vec(cerealbar.FOLLOWER_ID, num_envs=3, vectorization_mode="vector_entry_point", description=False)
    try:
        assert isinstance(vector.unwrapped, FollowerVectorEnv) and vector.num_envs == 3
        observation, _ = vector.reset(seed=5)
        assert vector.observation_space.contains(observation)
    finally:
        vector.close()


def test_bad_use_gets_clear_errors():
    with pytest.raises(ValueError, match="positive integer"):
        FollowerVectorEnv(0)
    vector = FollowerVectorEnv(2, description=False)
    try:
        with pytest.raises(EpisodeOverError):
            vector.step(np.array([0, 0]))
        vector.reset(seed=1)
        for bad in (np.array([0]), np.array([0, 5]), np.array([0.5, 1.0]), np.array([-1, 0])):
            with pytest.raises(IllegalActionError):
                vector.step(bad)
        with pytest.raises(ValueError, match="one seed per environment"):
            vector.reset(seed=[1, 2, 3])
    finally:
        vector.close()
    vector.close()
    with pytest.raises(EnvClosedError):
        vector.reset(seed=1)
