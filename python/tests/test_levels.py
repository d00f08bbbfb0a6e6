"""`levels`: the three follower environments refuse bad numbers of levels and seeds outside them
(changing nothing), and say so when no level gives a game instead of drawing forever. That they
play the same games on their levels is checked with the rest in test_vector.py and test_fast.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the vector environments' tests are skipped")

from cerealbar import FastFollowerVectorEnv, FollowerEnv, FollowerVectorEnv  # noqa: E402
from cerealbar.engine import OP_BATCH_RESET_AT, OP_RESET  # noqa: E402
from cerealbar.errors import InvalidRequestError  # noqa: E402

ENVS = {
    "FollowerEnv": lambda **options: FollowerEnv(description=False, max_steps=4, **options),
    "FollowerVectorEnv": lambda **options: FollowerVectorEnv(2, description=False, max_steps=4, **options),
    "FastFollowerVectorEnv": lambda **options: FastFollowerVectorEnv(2, max_steps=4, **options),
}


@pytest.mark.parametrize("kind", ENVS)
def test_bad_levels_are_refused_with_clear_errors(kind, selfplay_logs):
    for bad in (0, -3, 2.0, True, "4", [3]):
        with pytest.raises(ValueError, match=r"levels must be a positive integer \(seeds 0 to levels - 1\) or None, got"):
            ENVS[kind](levels=bad)
    if kind != "FollowerVectorEnv":  # it plays no logs
        with pytest.raises(ValueError, match="levels are self-play's seeds: with logs"):
            ENVS[kind](levels=3, logs=selfplay_logs)


def assert_same(result, expected, what: str) -> None:
    observation, *rest = result
    assert all(np.array_equal(observation[key], expected[0][key]) for key in observation), what
    for value, expected_value in zip(rest, expected[1:]):
        if isinstance(value, dict):
            assert list(np.atleast_1d(value.get("episode_id"))) == list(np.atleast_1d(expected_value.get("episode_id"))), what
        else:
            assert np.array_equal(value, expected_value), what


@pytest.mark.parametrize("kind", ENVS)
def test_a_seed_outside_the_levels_is_refused_and_changes_nothing(kind):
    single = kind == "FollowerEnv"
    env, fresh = ENVS[kind](levels=3), ENVS[kind](levels=3)
    try:
        first = 1 if single else [1, 2]
        for either in (env, fresh):
            either.reset(seed=first)
        # A seed of 3 or more, given alone, in a list, or as the int that gives environment i seed + i.
        outside = [3, np.int64(7), 2**32 - 1, -1, 1.5] if single else [[0, 3], [None, np.int64(7)], 2]
        for seed in outside:
            with pytest.raises(InvalidRequestError, match=r"one of the 3 levels, an integer from 0 to 2 \(Python ints or numpy integers, not bools\)[,;] got"):
                env.reset(seed=seed)
        # Nothing moved: the episodes go on, and the draws of the next ones are a fresh environment's.
        starts = 0
        for step in range(40):
            actions = step % 5 if single else np.array([step % 5, 4 - step % 5])
            result, expected = env.step(actions), fresh.step(actions)
            assert_same(result, expected, f"step {step}")
            if single and (result[2] or result[3]):
                assert_same(env.reset(), fresh.reset(), f"reset after step {step}")
                starts += 1
            elif not single:
                starts += int(np.sum(result[4].get("_episode_id", 0)))
        assert starts >= 8  # episodes of at most 4 steps: new games on drawn levels
    finally:
        env.close()
        fresh.close()


def refuse_every_game(kind: str, env, monkeypatch) -> list[int]:
    """Has the engine answer that no seed gives a game, as if every level ended before the
    follower's first turn (no such set of levels is known); returns the seeds asked for."""
    asked: list[int] = []
    if kind == "FastFollowerVectorEnv":
        part = env._parts[0]
        request = part.engine.request

        def no_game_at(arguments: bytes) -> bytearray:
            if arguments[0] != OP_BATCH_RESET_AT:
                return request(arguments)
            asked.append(int.from_bytes(arguments[9:13], "little"))
            return bytearray([0])

        monkeypatch.setattr(part.engine, "request", no_game_at)

        def every_slot_failed(op, arguments):
            asked.extend(int(seed) for seed in env._seeds)
            return list(range(env.num_envs))

        monkeypatch.setattr(env, "_exchange", every_slot_failed)
        return asked

    def no_game(task: bytes):
        asked.append(json.loads(task)["seed"])
        raise InvalidRequestError(f"seed {asked[-1]}: the game ended before the follower got a turn", "setup")

    if kind == "FollowerEnv":
        request = env._request
        monkeypatch.setattr(env, "_request", lambda op, arguments: no_game(arguments) if op == OP_RESET else request(op, arguments))
    else:
        request = env._engine.request
        monkeypatch.setattr(env._engine, "request", lambda arguments: no_game(arguments[5:]) if arguments[0] == OP_RESET else request(arguments))
    return asked


@pytest.mark.parametrize("kind", ENVS)
def test_when_no_level_gives_a_game_reset_says_so_instead_of_drawing_on(kind, monkeypatch):
    env = ENVS[kind](levels=2)
    try:
        asked = refuse_every_game(kind, env, monkeypatch)
        with pytest.raises(InvalidRequestError, match=r"none of the 2 levels gives a game \(seeds 0 to 1\): use more levels") as refused:
            env.reset()
        assert refused.value.kind == "setup"
        # Drawn until both levels had failed: a few draws (fewer than 50 but once in 2^48), not a hundred.
        assert set(asked) == {0, 1} and len(asked) < 50
    finally:
        env.close()
