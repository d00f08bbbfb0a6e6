"""The Python FollowerEnv against the TypeScript one: for the same episode and actions, the same
observations, rewards, terminations and infos, over many seeds and over logged episodes.

The TypeScript side (test/env/followerTrajectories.ts, and leaderTrajectories.ts for LeaderEnv) plays shared/env/env.ts's FollowerEnv
directly and prints its FollowerObservations as JSON; each is turned here into the arrays it must
give (by the map and card formats of docs/maps.md and docs/agents.md) and compared exactly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import cerealbar
from conftest import run_typescript
from expected import expected_arrays, expected_leader_arrays, expected_leader_mask

SEEDS = range(1, 41)
SETTINGS = [("sparse", 0.99), ("distance", 0.9), ("distance", 1.0)]


def assert_same_moment(python: tuple[dict, dict], reference: dict, layout, where: str) -> None:
    observation, info = python
    wanted = reference["observation"]
    for name, array in expected_arrays(wanted, layout).items():
        assert np.array_equal(observation[name], array), f"{where}: {name} differs"
    assert observation["instruction"] == (wanted["instruction"] or {}).get("text", ""), where
    assert observation["previous_instruction"] == (wanted["previousInstruction"] or {}).get("text", ""), where
    assert observation["description"] == reference["description"], where
    mask = [int(action in wanted["legal"]) for action in layout.actions]
    assert info["action_mask"].tolist() == mask, where
    expected_info = reference["info"]
    assert info["instruction_id"] == (-1 if expected_info["instructionId"] is None else expected_info["instructionId"]), where
    for name in ("score", "points", "steps", "potential", "shaping"):
        assert info[name] == expected_info[name], f"{where}: info {name}"


def play_python(env: cerealbar.FollowerEnv, reset: dict, actions: list[int]) -> tuple[tuple, list[tuple]]:
    start = env.reset(**reset)
    steps = []
    for action in actions:
        step = env.step(action)
        steps.append(step)
        if step[2] or step[3]:
            break
    return start, steps


def compare(episodes: list[dict], make_env, reset_of) -> int:
    """Plays every episode on both sides and compares them moment by moment; returns the steps compared."""
    trajectories = json.loads(run_typescript("test/env/followerTrajectories.ts", stdin=json.dumps(episodes)))
    compared = 0
    for episode, reference in zip(episodes, trajectories, strict=True):
        with make_env(episode) as env:
            start, steps = play_python(env, reset_of(episode), episode["actions"])
            where = json.dumps({key: value for key, value in episode.items() if key != "actions"})
            assert start[1]["episode_id"] == reference["reset"]["info"]["episodeId"]
            assert_same_moment(start, reference["reset"], env.layout, f"{where} reset")
            assert len(steps) == len(reference["steps"]), where
            for t, (step, wanted) in enumerate(zip(steps, reference["steps"])):
                observation, reward, terminated, truncated, info = step
                assert (reward, terminated, truncated) == (wanted["reward"], wanted["terminated"], wanted["truncated"]), f"{where} step {t}"
                assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
                assert_same_moment((observation, info), wanted, env.layout, f"{where} step {t}")
                compared += 1
    return compared


def test_self_play_over_many_seeds_gives_the_typescript_trajectories():
    rng = np.random.default_rng(2024)
    episodes = []
    for i, seed in enumerate(SEEDS):
        reward, gamma = SETTINGS[i % len(SETTINGS)]
        # Long enough to cross turns and instructions; maxSteps 120 truncates some episodes, and
        # a game that ends first terminates.
        actions = rng.choice(5, size=160, p=[0.4, 0.1, 0.2, 0.2, 0.1]).tolist()
        episodes.append({"seed": seed, "reward": reward, "gamma": gamma, "maxSteps": 120, "actions": actions})
    compared = compare(
        episodes,
        lambda episode: cerealbar.FollowerEnv(reward=episode["reward"], gamma=episode["gamma"], max_steps=episode["maxSteps"]),
        lambda episode: {"seed": episode["seed"]},
    )
    assert compared > 40 * 60


def test_logged_episodes_give_the_typescript_trajectories(selfplay_logs):
    log = selfplay_logs / "selfplay-1.jsonl"
    rng = np.random.default_rng(7)
    with cerealbar.FollowerEnv(logs=log) as env:
        count = len(env.episodes)
    episodes = [
        {"log": str(log), "instruction": index, "reward": reward, "gamma": 0.95, "maxSteps": 80, "actions": rng.integers(0, 5, 100).tolist()}
        for index, reward in [(0, "ndtw"), (count // 2, "distance"), (count - 1, "ndtw"), (3, "sparse")]
    ]
    compared = compare(
        episodes,
        lambda episode: cerealbar.FollowerEnv(reward=episode["reward"], gamma=episode["gamma"], max_steps=episode["maxSteps"], logs=episode["log"]),
        lambda episode: {"options": {"episode": episode["instruction"]}},
    )
    assert compared > 100


def same(a, b) -> bool:
    """Equal values, numpy arrays compared element by element, inside tuples, lists and dicts too."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("seed", [3, 11])
def test_the_same_seed_and_actions_give_the_same_trajectory(seed):
    """Determinism: two environments, one of them used before, play the same episode alike."""
    actions = np.random.default_rng(seed).integers(0, 5, 150).tolist()
    with cerealbar.FollowerEnv(reward="distance") as first, cerealbar.FollowerEnv(reward="distance") as second:
        play_python(second, {"seed": seed + 100}, actions)
        played = play_python(first, {"seed": seed}, actions)
        assert len(played[1]) > 20
        assert same(played, play_python(second, {"seed": seed}, actions))
        # An unseeded reset draws its game from the generator that the last seed set.
        first.reset(seed=seed)
        second.reset(seed=seed)
        assert same(first.reset(), second.reset())


def test_leader_env_gives_the_typescript_trajectories():
    """LeaderEnv's views, rewards, terminations and infos equal the TypeScript LeaderEnv's, both built-in followers."""
    episodes = [{"seed": seed, "maxSteps": 300, "follower": "heuristic" if seed % 3 else "random", "random": 0.15} for seed in range(20, 32)]
    trajectories = json.loads(run_typescript("test/env/leaderTrajectories.ts", stdin=json.dumps(episodes)))
    compared = points = 0
    for episode, reference in zip(episodes, trajectories, strict=True):
        with cerealbar.LeaderEnv(max_steps=episode["maxSteps"], follower=episode["follower"]) as env:
            where = f"seed {episode['seed']}"
            observation, info = env.reset(seed=episode["seed"])
            assert info["episode_id"] == reference["reset"]["info"]["episodeId"]
            assert_same_leader_moment(observation, info, reference["reset"], env.layout, f"{where} reset")
            for t, wanted in enumerate(reference["steps"]):
                action = {"action": wanted["action"], "instruction": wanted.get("instruction")}
                observation, reward, terminated, truncated, info = env.step(action)
                assert (reward, terminated, truncated) == (wanted["reward"], wanted["terminated"], wanted["truncated"]), f"{where} step {t}"
                assert_same_leader_moment(observation, info, wanted, env.layout, f"{where} step {t}")
                compared += 1
                points += reward
    assert compared > 150 and points > 0


def assert_same_leader_moment(observation: dict, info: dict, wanted: dict, layout, where: str) -> None:
    for name, value in expected_leader_arrays(wanted["view"], layout).items():
        assert np.array_equal(observation[name], value) if isinstance(value, np.ndarray) else observation[name] == value, f"{where}: {name} differs"
    assert info["action_mask"]["action"].tolist() == expected_leader_mask(wanted["view"]), where
    expected = wanted["info"]
    assert info["refused"] == ((expected["refused"] or {}).get("code") or ""), where
    for name, key in (("score", "score"), ("points", "points"), ("steps", "steps"), ("follower_actions", "followerActions")):
        assert info[name] == expected[key], f"{where}: info {name}"
