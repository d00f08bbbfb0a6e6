"""Seeds: every environment takes Python and numpy integers alike (alone, or in a vector
environment one per environment, None drawn), and refuses anything else (bools, floats, strings,
a wrong length or nesting, negative or out-of-range integers) with one InvalidRequestError (a
ValueError) that names what was given and what is accepted, before anything changes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cerealbar
from cerealbar.errors import InvalidRequestError

INTEGERS = re.escape("(Python ints or numpy integers, not bools)")


def given(value) -> str:
    return re.escape(f"{value!r} (type {type(value).__name__})")


def single_envs() -> dict:
    kinds = {
        "FollowerEnv": lambda: cerealbar.FollowerEnv(description=False),
        "LeaderEnv": lambda: cerealbar.LeaderEnv(),
    }
    try:
        import pettingzoo  # noqa: F401
    except ImportError:
        pass
    else:
        from cerealbar import multiagent

        kinds["parallel_env"] = lambda: multiagent.parallel_env(description=False)
    return kinds


def vector_envs() -> dict:
    pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environments' seeds are not checked")
    return {
        "FollowerVectorEnv": lambda: cerealbar.FollowerVectorEnv(2, description=False, max_steps=4),
        "FastFollowerVectorEnv": lambda: cerealbar.FastFollowerVectorEnv(2, max_steps=4),
    }


def first_observation(result) -> dict:
    """The observation (the follower's, or the leader's in the two-player environment) and the episode id of a reset."""
    observation, info = result
    if isinstance(observation.get("leader"), dict):
        return {"episode_id": info["leader"]["episode_id"], **observation["leader"]}
    return {"episode_id": info["episode_id"], **{key: value for key, value in observation.items() if isinstance(value, np.ndarray)}}


def assert_same_reset(result, expected, what: str) -> None:
    result, expected = first_observation(result), first_observation(expected)
    assert result.keys() == expected.keys(), what
    for key in result:
        assert np.array_equal(np.asarray(result[key]), np.asarray(expected[key])), f"{what}: {key}"


@pytest.mark.parametrize("kind", ["FollowerEnv", "LeaderEnv", "parallel_env"])
def test_a_single_environment_takes_numpy_integer_seeds_and_refuses_anything_else(kind):
    if kind not in single_envs():
        pytest.skip("PettingZoo is not importable: the two-player environment is not checked")
    env = single_envs()[kind]()
    try:
        expected = env.reset(seed=3)
        for seed in (np.int64(3), np.uint32(3), np.int8(3)):
            assert_same_reset(env.reset(seed=seed), expected, repr(seed))
        for bad in (1.5, True, np.bool_(False), "3", -1, np.int64(-1), 2**32, [3], np.float64(3.0)):
            with pytest.raises(InvalidRequestError, match=rf"^seed must be None or an integer from 0 to 4294967295 {INTEGERS}, got {given(bad)}$") as refused:
                env.reset(seed=bad)
            assert refused.value.kind == "invalid" and isinstance(refused.value, ValueError)
        # The largest seed is one: the engine plays it.
        assert first_observation(env.reset(seed=np.uint32(2**32 - 1)))["episode_id"] == f"selfplay-{2**32 - 1}"
    finally:
        env.close()


@pytest.mark.parametrize("kind", ["FollowerVectorEnv", "FastFollowerVectorEnv"])
def test_a_vector_environment_takes_numpy_integer_seeds(kind):
    env = vector_envs()[kind]()
    try:
        expected = env.reset(seed=3)
        assert list(expected[1]["episode_id"]) == ["selfplay-3", "selfplay-4"]
        for seed in (np.int64(3), np.uint16(3), [np.int64(3), np.uint32(4)], (3, np.int32(4)), np.array([3, 4]), range(3, 5)):
            assert_same_reset(env.reset(seed=seed), expected, repr(seed))
        # None entries are drawn; the others are given.
        _, infos = env.reset(seed=[None, np.int64(9)])
        assert infos["episode_id"][1] == "selfplay-9" and infos["episode_id"][0].startswith("selfplay-")
    finally:
        env.close()


VECTOR_ACCEPTS = re.escape(
    "seed must be None, an integer s from 0 to 4294967294 (environment i plays seed s + i), or a sequence of one seed per environment (2), "
    "each None or an integer from 0 to 4294967295 (Python ints or numpy integers, not bools); got "
)


@pytest.mark.parametrize("kind", ["FollowerVectorEnv", "FastFollowerVectorEnv"])
def test_a_vector_environment_refuses_any_other_seed_with_one_message_and_changes_nothing(kind):
    env, fresh = vector_envs()[kind](), vector_envs()[kind]()
    try:
        for either in (env, fresh):
            either.reset(seed=[1, 2])
        whole = [1.5, True, np.bool_(True), "3", "12", b"12", np.float64(3.0), {1, 2}, -1, np.int64(-1), 2**32 - 1, 2**32, np.array([[1, 2]])]
        for bad in whole:
            with pytest.raises(InvalidRequestError, match=f"^{VECTOR_ACCEPTS}{given(bad)}$") as refused:
                env.reset(seed=bad)
            assert refused.value.kind == "invalid"
        for bad in ([1], [1, 2, 3], ()):
            with pytest.raises(InvalidRequestError, match=f"^{VECTOR_ACCEPTS}a {type(bad).__name__} of {len(bad)}$"):
                env.reset(seed=bad)
        for bad in (1.5, True, "2", [2], (2,), -1, 2**32, np.float32(2.0)):
            with pytest.raises(InvalidRequestError, match=rf"^seed\[1\] must be None or an integer from 0 to 4294967295 {INTEGERS}, got {given(bad)}$"):
                env.reset(seed=[1, bad])
        with pytest.raises(InvalidRequestError, match=rf"^seed\[0\] must be None or an integer from 0 to 4294967295 {INTEGERS}, got {given([1, 2])}$"):
            env.reset(seed=[[1, 2], [3, 4]])
        # Nothing moved: the episodes go on, and the draws of the next ones are a fresh environment's.
        starts = 0
        for step in range(16):
            actions = np.array([step % 5, 4 - step % 5])
            result, expected = env.step(actions), fresh.step(actions)
            assert all(np.array_equal(result[0][key], expected[0][key]) for key in result[0] if isinstance(result[0][key], np.ndarray)), step
            assert np.array_equal(result[1], expected[1]) and list(result[4].get("episode_id", [])) == list(expected[4].get("episode_id", [])), step
            starts += int(np.sum(result[4].get("_episode_id", 0)))
        assert starts >= 4  # episodes of at most 4 steps: new games on drawn seeds
    finally:
        env.close()
        fresh.close()
