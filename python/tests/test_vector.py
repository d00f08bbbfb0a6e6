"""`FollowerVectorEnv`: the same trajectories as FollowerEnvs in Gymnasium's SyncVectorEnv (same
seeds, same actions, autoresets included), from one Node process; and bad use."""

from __future__ import annotations

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environment's tests are skipped")

from cerealbar import FollowerEnv  # noqa: E402
from cerealbar.errors import EnvClosedError, EpisodeOverError, IllegalActionError  # noqa: E402
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
