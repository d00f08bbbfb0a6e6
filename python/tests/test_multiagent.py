"""The PettingZoo environments: PettingZoo's own API tests, the turn structure, the same trajectories
as the TypeScript GameEnv, and bad use. Skipped where PettingZoo cannot be imported."""

from __future__ import annotations

import json
import os
import signal
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="PettingZoo is not importable: the PettingZoo tests are skipped")

from pettingzoo.test import api_test, parallel_api_test  # noqa: E402

import cerealbar  # noqa: E402
from cerealbar import multiagent  # noqa: E402
from conftest import run_typescript  # noqa: E402
from expected import expected_arrays, expected_leader_arrays, expected_leader_mask  # noqa: E402

NO_OPTIONS = "take no reset options"


@pytest.fixture
def aec():
    env = multiagent.env(description=False)
    yield env
    env.close()


@pytest.fixture
def parallel():
    env = multiagent.parallel_env(description=False)
    yield env
    env.close()


def test_pettingzoos_api_test_passes(aec):
    # PettingZoo's test passes reset options to check that reset takes them: ours has none and says so.
    with pytest.warns(UserWarning, match=NO_OPTIONS):
        api_test(aec, num_cycles=1000)


def test_pettingzoos_parallel_api_test_passes(parallel):
    with pytest.warns(UserWarning, match=NO_OPTIONS):
        parallel_api_test(parallel, num_cycles=1000)


def test_the_agent_selected_is_the_player_in_control(aec):
    aec.reset(seed=3)
    assert aec.possible_agents == ["leader", "follower"] and aec.agent_selection == "leader"
    assert aec.infos["leader"]["in_control"] and not aec.infos["follower"]["in_control"]
    assert aec.infos["follower"]["action_mask"].tolist() == [0, 0, 0, 0, 0]
    assert aec.infos["leader"]["action_mask"]["action"].tolist()[4:] == [0, 1]  # nothing queued to end the turn for
    aec.step({"action": 5, "instruction": "get the red star"})
    assert aec.agent_selection == "leader"
    aec.step(4)  # End Turn
    assert aec.agent_selection == "follower"
    observation, reward, terminated, truncated, info = aec.last()
    assert observation["instruction"] == "get the red star"
    assert info["in_control"] and info["action_mask"][4] == 1 and (reward, terminated, truncated) == (0.0, False, False)
    assert aec.observe("leader")["queue"] == "get the red star"
    aec.step(4)  # DONE: the queue is empty, so the follower's turn ends
    assert aec.agent_selection == "leader"
    assert aec.observe("follower")["previous_instruction"] == "get the red star"
    # A refused action changes nothing but is a step: End Turn with nothing queued.
    aec.step(4)
    assert aec.infos["leader"]["refused"] == "EMPTY_QUEUE" and aec.infos["leader"]["steps"] == 4


def test_parallel_plays_the_action_of_the_player_in_control_and_ignores_the_other(parallel):
    observations, infos = parallel.reset(seed=3)
    assert infos["leader"]["in_control"] and infos["leader"]["episode_id"] == "selfplay-3"
    before = observations["follower"]["pose"].copy()
    # The follower's action is not even an action: it is not looked at.
    observations, rewards, terminations, truncations, infos = parallel.step({"leader": 2, "follower": "anything"})
    assert infos["leader"]["refused"] == "" and np.array_equal(observations["follower"]["pose"], before)
    assert rewards == {"leader": 0.0, "follower": 0.0} and terminations == {"leader": False, "follower": False}
    with pytest.raises(KeyError, match="leader's turn"):
        parallel.step({"follower": 0})
    parallel.step({"leader": {"action": 5, "instruction": "go"}})
    parallel.step({"leader": 4})
    observations, *_, infos = parallel.step({"follower": 0, "leader": None})
    assert infos["follower"]["in_control"] and infos["follower"]["steps"] == 4


def test_the_same_trajectories_as_the_typescript_game_env():
    """Both players' observations, the rewards and the turns equal GameEnv's, over several seeds."""
    episodes = [{"seed": seed, "maxSteps": 2000, "random": 0.1 if seed % 2 else 0.0} for seed in range(2, 12)]
    trajectories = json.loads(run_typescript("test/env/gameTrajectories.ts", stdin=json.dumps(episodes)))
    compared = points = 0
    env = multiagent.env(max_steps=2000)
    try:
        for episode, reference in zip(episodes, trajectories, strict=True):
            env.reset(seed=episode["seed"])
            check_moment(env, reference["reset"], f"seed {episode['seed']} reset")
            for t, wanted in enumerate(reference["steps"]):
                where = f"seed {episode['seed']} step {t}"
                assert env.agent_selection == wanted["role"], where
                action = {"action": wanted["action"], "instruction": wanted.get("instruction")} if wanted["role"] == "leader" else wanted["action"]
                env.step(action)
                assert env.rewards == {"leader": wanted["reward"], "follower": wanted["reward"]}, where
                assert env.terminations["leader"] == wanted["terminated"] and env.truncations["leader"] == wanted["truncated"], where
                check_moment(env, wanted, where)
                compared += 1
                points += wanted["reward"]
            assert reference["steps"][-1]["terminated"]
    finally:
        env.close()
    assert compared > 500 and points > 0


def check_moment(env, wanted: dict, where: str) -> None:
    if not wanted["terminated"]:
        assert env.agent_selection == wanted["control"], where
    follower, leader = env.observe("follower"), env.observe("leader")
    for name, array in expected_arrays(wanted["follower"], env.layouts["follower"]).items():
        assert np.array_equal(follower[name], array), f"{where}: follower {name} differs"
    assert follower["instruction"] == (wanted["follower"]["instruction"] or {}).get("text", ""), where
    assert follower["description"] == wanted["description"], where
    for name, value in expected_leader_arrays(wanted["leader"], env.layouts["leader"]).items():
        assert np.array_equal(leader[name], value) if isinstance(value, np.ndarray) else leader[name] == value, f"{where}: leader {name} differs"
    infos = env.infos
    assert infos["leader"]["action_mask"]["action"].tolist() == expected_leader_mask(wanted["leader"]), where
    assert infos["follower"]["action_mask"].tolist() == [int(code in wanted["follower"]["legal"]) for code in env.layouts["follower"].actions], where
    assert infos["leader"]["refused"] == ((wanted["info"]["refused"] or {}).get("code") or ""), where
    for agent in ("leader", "follower"):
        assert infos[agent]["score"] == wanted["info"]["score"] and infos[agent]["steps"] == wanted["info"]["steps"], where


def test_the_follower_sees_only_its_view(aec):
    """Cards lie only on cells the follower sees or saw, and terrain it never saw is unseen."""
    aec.reset(seed=5)
    unseen = aec.layouts["follower"].codes["terrain"].index("unseen")
    rng = np.random.default_rng(0)
    for agent in aec.agent_iter(400):
        observation, _, terminated, truncated, info = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        follower = aec.observe("follower")
        known = follower["card_seen_ago"] >= 0
        assert not follower["cards"][~known].any()
        assert (follower["terrain"][known] != unseen).all()
        assert (follower["terrain"] == unseen).any()  # 25 x 25 cells are never all in a cone of 5 hexes
        mask = info["action_mask"]["action"] if agent == "leader" else info["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask))) if mask.any() else 0
        aec.step({"action": action, "instruction": "get the card"} if agent == "leader" else action)


def test_bad_use_raises_clear_errors():
    env = multiagent.env(description=False)
    with pytest.raises(cerealbar.EpisodeOverError, match="reset"):
        env.step(0)
    env.reset(seed=4)
    with pytest.raises(cerealbar.IllegalActionError, match="0 to 5"):
        env.step(9)
    with pytest.raises(cerealbar.IllegalActionError, match="INSTRUCTION needs its text"):
        env.step(5)
    # The engine process dies: the step says so, and the next reset starts a new one.
    os.kill(env.engine_pid, signal.SIGKILL)
    with pytest.raises(cerealbar.EngineCrashedError):
        env.step(0)
    env.reset(seed=4)
    env.step(2)
    env.close()
    env.close()
    with pytest.raises(cerealbar.EnvClosedError):
        env.reset(seed=1)
    with pytest.raises(ValueError, match="render_mode"):
        multiagent.parallel_env(render_mode="human")


def test_an_episode_cut_at_max_steps_removes_both_agents_and_renders():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = multiagent.parallel_env(description=False, render_mode="rgb_array", max_steps=30)
    try:
        observations, _ = env.reset(seed=7)
        picture = env.render()
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
        for _ in range(30):  # the leader turns on the spot (the follower's action is ignored) until max_steps
            observations, rewards, terminations, truncations, infos = env.step({agent: 2 for agent in env.agents})
            if not env.agents:
                break
        assert env.agents == [] and all(truncations.values())
        with pytest.raises(cerealbar.EpisodeOverError):
            env.step({"leader": 2})
    finally:
        env.close()
    ansi = multiagent.env(description=False, render_mode="ansi")
    ansi.reset(seed=7)
    assert ansi.render().startswith("leader's turn\nleader at")
    ansi.close()
