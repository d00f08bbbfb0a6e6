"""`FastFollowerVectorEnv`: the same trajectories as `FollowerVectorEnv(description=False)` (same
seeds, same actions, seed draws, autoresets and seeds that give no game included), Gymnasium's
vector API, the shared file's arrays, and bad use."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the fast vector environment's tests are skipped")

import cerealbar  # noqa: E402
from cerealbar import fast  # noqa: E402
from cerealbar.errors import EngineCrashedError, EnvClosedError, EpisodeOverError, IllegalActionError, InvalidRequestError  # noqa: E402
from cerealbar.fast import FastFollowerVectorEnv  # noqa: E402
from cerealbar.vector import FollowerVectorEnv  # noqa: E402

NO_GAME = 139765  # a seed whose game ends before the follower's first turn
TEXTS = ("instruction", "previous_instruction")


class ForcedDraws:
    """A generator whose first draws are given (seeds with no game, say), then those of default_rng(seed)."""

    def __init__(self, seed: int, forced: list[int]):
        self.rng = np.random.default_rng(seed)
        self.forced = list(forced)

    def integers(self, low, high):
        return self.forced.pop(0) if self.forced else self.rng.integers(low, high)


def force_draws(env, slot: int, seed: int, forced: list[int]) -> ForcedDraws:
    env._generators[slot] = ForcedDraws(seed, forced)
    return env._generators[slot]


def assert_same_step(fast_result, vector_result, what: str) -> None:
    """Everything FollowerVectorEnv gives, but the texts, and its integer infos are int64 where the batch's are int32."""
    observation, *scalars, infos = fast_result
    expected_observation, *expected_scalars, expected_infos = vector_result
    assert observation.keys() == expected_observation.keys() - set(TEXTS), what
    for key, array in observation.items():
        assert array.dtype == expected_observation[key].dtype and np.array_equal(array, expected_observation[key]), f"{what}: {key}"
    for name, array, expected in zip(("rewards", "terminations", "truncations"), scalars, expected_scalars):
        assert array.dtype == expected.dtype and np.array_equal(array, expected), f"{what}: {name}"
    assert infos.keys() == expected_infos.keys(), what
    for key, value in infos.items():
        assert value.shape == expected_infos[key].shape and list(value.ravel()) == list(expected_infos[key].ravel()), f"{what}: info {key}"


def check_arrays(env, observation, rewards, terminations, truncations) -> None:
    """Each field's dtype and shape is its space's with a leading axis of N, and the observation is in the space."""
    assert env.observation_space.contains(observation)
    for key, space in env.single_observation_space.items():
        assert observation[key].dtype == space.dtype and observation[key].shape == (env.num_envs, *space.shape), key
    assert rewards.dtype == np.float64 and rewards.shape == (env.num_envs,)
    assert terminations.dtype == truncations.dtype == np.bool_ and terminations.shape == truncations.shape == (env.num_envs,)


@pytest.mark.parametrize("reward, processes", [("sparse", 1), ("distance", 1), ("distance", 2)])
def test_the_same_games_as_follower_vector_env_autoresets_and_seeds_with_no_game_included(reward, processes):
    n, options = 5, {"reward": reward, "gamma": 0.9, "max_steps": 6}
    env = FastFollowerVectorEnv(n, processes=processes, **options)
    vector = FollowerVectorEnv(n, description=False, **options)
    try:
        assert env.metadata["autoreset_mode"] == vector.metadata["autoreset_mode"]
        assert env.single_observation_space == gymnasium.spaces.Dict({key: space for key, space in vector.single_observation_space.items() if key not in TEXTS})
        assert env.single_action_space == vector.single_action_space and env.action_space == vector.action_space
        # A given seed with no game is refused by both, and no episode runs.
        for either in (env, vector):
            with pytest.raises(InvalidRequestError) as refused:
                either.reset(seed=[1, 2, NO_GAME, 4, 5])
            assert refused.value.kind == "setup"
        with pytest.raises(EpisodeOverError):
            env.step(np.zeros(n, dtype=np.int64))

        rng = np.random.default_rng(3)
        ended = starts = 0
        forced = []
        for run, seed in enumerate((11, None)):
            if seed is None:
                # Drawn seeds with no game are drawn again: at reset here, at an autoreset below.
                forced += [force_draws(either, 1, 7, [NO_GAME]) for either in (env, vector)]
            result, expected = env.reset(seed=seed), vector.reset(seed=seed)
            assert_same_step((result[0], result[1]), (expected[0], expected[1]), f"reset {run}")
            assert list(result[1]["episode_id"]) == [f"selfplay-{seed}" for seed in env._seeds]
            check_arrays(env, result[0], np.zeros(n), np.zeros(n, bool), np.zeros(n, bool))
            previous_ended = np.zeros(n, dtype=np.bool_)
            for step in range(150):
                if step == 40:
                    forced += [force_draws(either, 3, 5, [NO_GAME, NO_GAME]) for either in (env, vector)]
                actions = rng.integers(0, 5, size=n)
                result, expected = env.step(actions), vector.step(actions)
                assert_same_step(result, expected, f"run {run}, step {step}")
                observation, rewards, terminations, truncations, infos = result
                check_arrays(env, observation, rewards, terminations, truncations)
                # Next-step autoreset: an environment that ended starts a new game, reward 0, not ended.
                assert not (terminations | truncations)[previous_ended].any() and not rewards[previous_ended].any()
                assert (infos["steps"][previous_ended] == 0).all()
                assert np.array_equal(infos.get("_episode_id", np.zeros(n, bool)), previous_ended)
                starts += int(previous_ended.sum())
                previous_ended = terminations | truncations
                ended += int(previous_ended.sum())
        # Episodes of at most 6 steps: many ended and started again; every forced seed was drawn.
        assert ended >= 100 and starts >= 100
        assert all(not generator.forced for generator in forced)
    finally:
        env.close()
        vector.close()


@pytest.mark.parametrize("processes", [1, 2])
def test_copy_false_gives_the_same_arrays_every_step_and_copy_true_gives_new_ones(processes):
    env = FastFollowerVectorEnv(3, copy=False, processes=processes)
    copied = FastFollowerVectorEnv(3, processes=processes)
    try:
        first, first_infos = env.reset(seed=2)
        kept = {key: array.copy() for key, array in first.items()}
        second, rewards, terminations, truncations, infos = env.step(np.array([0, 2, 3]))
        after_step = {key: array.copy() for key, array in second.items()}
        again = env.step(np.array([1, 2, 3]))
        assert second is first and again[0] is first
        assert all(second[key] is first[key] for key in first)
        # With one process, the mapped arrays themselves.
        assert all(first[key].flags.writeable == (processes > 1) for key in first)
        assert again[1] is rewards and again[2] is terminations and again[3] is truncations
        assert all(again[4][key] is infos[key] for key in ("score", "action_mask", "potential"))
        assert not np.array_equal(first["pose"], kept["pose"])  # overwritten in place

        observation, _ = copied.reset(seed=2)
        assert all(np.array_equal(observation[key], kept[key]) for key in kept)
        step = copied.step(np.array([0, 2, 3]))
        assert step[0] is not observation and step[0]["pose"] is not observation["pose"] and step[0]["pose"].flags.writeable
        assert np.array_equal(observation["pose"], kept["pose"])  # what was returned stays as it was
        assert all(np.array_equal(step[0][key], after_step[key]) for key in kept)
    finally:
        env.close()
        copied.close()
    # The arrays held after close keep the last values.
    assert first["terrain"].shape == (3, 25, 25) and int(first["terrain"].sum()) > 0


def test_close_stops_the_process_and_leaves_no_file(monkeypatch):
    made = []
    real = fast.tempfile.mkstemp

    def recording(*args, **kwargs):
        fd, path = real(*args, **kwargs)
        made.append(path)
        return fd, path

    monkeypatch.setattr(fast.tempfile, "mkstemp", recording)
    env = FastFollowerVectorEnv(3, processes=2)
    pids = env.engine_pids
    assert len(set(pids)) == len(made) == 2 and all( os.path.dirname(path) == ("/dev/shm" if os.path.isdir("/dev/shm") else os.path.dirname(path)) for path in made)
    # Removed as soon as both processes have them open.
    assert not any(os.path.exists(path) for path in made)
    env.reset(seed=1)
    env.step(np.array([0, 0, 0]))
    env.close()
    env.close()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with pytest.raises(EnvClosedError):
        env.step(np.array([0, 0, 0]))
    with pytest.raises(EnvClosedError):
        env.reset(seed=1)


def test_a_process_that_dies_is_reported_and_the_others_stop_at_close():
    env = FastFollowerVectorEnv(4, processes=2)
    try:
        env.reset(seed=1)
        first, second = env.engine_pids
        os.kill(second, signal.SIGKILL)
        with pytest.raises(EngineCrashedError):
            env.step(np.zeros(4, dtype=np.int64))
        with pytest.raises(EpisodeOverError):
            env.step(np.zeros(4, dtype=np.int64))
    finally:
        env.close()
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)


def test_make_vec_builds_it_and_the_sync_mode_plays_the_same_games():
    vector = gymnasium.make_vec(cerealbar.FAST_FOLLOWER_ID, num_envs=3, reward="distance")
    sync = gymnasium.make_vec(cerealbar.FAST_FOLLOWER_ID, num_envs=3, vectorization_mode="sync", reward="distance")
    try:
        assert isinstance(vector.unwrapped, FastFollowerVectorEnv) and vector.num_envs == 3
        observation, _ = vector.reset(seed=5)
        expected, _ = sync.reset(seed=5)
        for step in range(20):
            actions = np.array([step % 5, 2, 0])
            observation, rewards, *_ = vector.step(actions)
            expected, expected_rewards, *_ = sync.step(actions)
            assert all(np.array_equal(observation[key], expected[key]) for key in observation) and np.array_equal(rewards, expected_rewards)
    finally:
        vector.close()
        sync.close()


def test_bad_use_gets_clear_errors_and_changes_nothing():
    with pytest.raises(ValueError, match="positive integer"):
        FastFollowerVectorEnv(0)
    for processes in (0, 3, 1.0):
        with pytest.raises(ValueError, match="processes must be an integer from 1 to num_envs"):
            FastFollowerVectorEnv(2, processes=processes)
    with pytest.raises(ValueError, match="no text fields"):
        FastFollowerVectorEnv(2, description=True)
    with pytest.raises(InvalidRequestError, match="reward"):
        FastFollowerVectorEnv(2, reward="ndtw")
    env = FastFollowerVectorEnv(2)
    try:
        with pytest.raises(EpisodeOverError):
            env.step(np.array([0, 0]))
        for bad in (-1, 2**32, 1.5, "7"):
            with pytest.raises(InvalidRequestError, match="seeds are integers"):
                env.reset(seed=[1, bad])
        with pytest.raises(ValueError, match="one seed per environment"):
            env.reset(seed=[1, 2, 3])
        with pytest.raises(ValueError, match="reset options"):
            env.reset(seed=1, options={"episode": 0})
        observation, _ = env.reset(seed=1)
        for bad in (np.array([0]), np.array([0, 5]), np.array([0.5, 1.0]), np.array([-1, 0]), np.array([[0, 0]])):
            with pytest.raises(IllegalActionError):
                env.step(bad)
        # Nothing moved: the next step is the one a fresh environment takes.
        fresh = FastFollowerVectorEnv(2)
        try:
            fresh.reset(seed=1)
            assert all(np.array_equal(a, b) for a, b in zip(env.step(np.array([0, 2]))[0].values(), fresh.step(np.array([0, 2]))[0].values()))
        finally:
            fresh.close()
    finally:
        env.close()
