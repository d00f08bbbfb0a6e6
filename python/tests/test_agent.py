"""Python followers under the agent protocol: a FollowerAgent's `act` gets FollowerEnv's observation,
the example agent is evaluated by the command line, and bad answers or messages are clear errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import cerealbar
from cerealbar.agent import AgentProtocolError
from conftest import REPO, node, run_typescript

EXAMPLE = REPO / "examples" / "agents" / "linear_follower.py"
HELLO = {"type": "hello", "protocol": "cerealbar-agent", "version": 2}


class Recorder(cerealbar.FollowerAgent):
    """Plays the given actions and keeps what it was given."""

    name = "recorder"

    def __init__(self, actions):
        self.actions = list(actions)
        self.seen: list[tuple[dict, dict]] = []
        self.episodes: list[str] = []

    def reset(self, episode_id):
        self.episodes.append(episode_id)

    def act(self, observation, info):
        self.seen.append((observation, info))
        return self.actions[len(self.seen) - 1]


def converse(agent: cerealbar.FollowerAgent, messages: list[dict]) -> list[dict]:
    """The agent's answers to the host's messages (then close)."""
    stdin = io.StringIO("".join(json.dumps(message) + "\n" for message in [*messages, {"type": "close"}]))
    stdout = io.StringIO()
    agent.run(stdin, stdout)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


def observe_messages(observations: list[dict]) -> list[dict]:
    """Observe messages as a host sends them: the map only when it changed."""
    messages, last_map = [], None
    for observation in observations:
        wire = dict(observation)
        if observation["map"] == last_map:
            del wire["map"]
        last_map = observation["map"]
        messages.append({"type": "observe", "observation": wire, "text": "(the description)"})
    return messages


@pytest.mark.parametrize("seed", [4, 9])
def test_act_gets_the_observation_and_mask_a_follower_env_gives(seed):
    actions = np.random.default_rng(seed).choice(5, size=60, p=[0.4, 0.1, 0.2, 0.2, 0.1]).tolist()
    (reference,) = json.loads(run_typescript("test/env/followerTrajectories.ts", stdin=json.dumps([{"seed": seed, "reward": "sparse", "gamma": 0.99, "maxSteps": 500, "actions": actions}])))
    observations = [reference["reset"]["observation"]] + [step["observation"] for step in reference["steps"]][:-1]
    agent = Recorder(actions)
    answers = converse(agent, [HELLO, {"type": "reset", "episode": {"episodeId": f"selfplay-{seed}"}}, *observe_messages(observations)])
    assert answers[0] == {"type": "hello", "protocol": "cerealbar-agent", "version": 2, "name": "recorder", "oracle": False, "needsRecording": False}
    assert answers[1] == {"type": "ready"} and agent.episodes == [f"selfplay-{seed}"]
    names = ["MF", "MB", "RL", "RR", "DONE"]
    assert [answer["action"] for answer in answers[2:]] == [names[action] for action in actions[: len(observations)]]
    assert any("map" not in message["observation"] for message in observe_messages(observations))  # the kept map was used

    with cerealbar.FollowerEnv() as env:
        expected = [env.reset(seed=seed)]
        for action in actions[: len(observations) - 1]:
            observation, _, _, _, info = env.step(action)
            expected.append((observation, info))
    assert len(agent.seen) == len(expected) > 30
    for t, ((observation, info), (wanted, wanted_info)) in enumerate(zip(agent.seen, expected)):
        assert observation.keys() == wanted.keys(), t
        for name, value in wanted.items():
            assert np.array_equal(observation[name], value) if isinstance(value, np.ndarray) else observation[name] == value, f"step {t}: {name}"
        assert np.array_equal(info["action_mask"], wanted_info["action_mask"]), t
        for name in ("score", "points", "steps", "instruction_id"):
            assert info[name] == wanted_info[name], f"step {t}: info {name}"
        assert info["episode_id"] == f"selfplay-{seed}"


def test_the_example_agent_is_evaluated_by_the_command_line(selfplay_logs, tmp_path):
    weights = tmp_path / "weights.npy"
    np.save(weights, np.random.default_rng(0).normal(size=(5, 4)))
    report = tmp_path / "report.json"
    result = subprocess.run(
        [node(), str(REPO / "bin" / "cerealbar.cjs"), "eval", "--agent", f"{sys.executable} {EXAMPLE} --weights {weights}", "--logs", str(selfplay_logs), "--out", str(report)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO / "python" / "src")},
    )
    assert result.returncode == 0, result.stderr
    written = json.loads(report.read_text())
    assert len(written["episodes"]) > 20 and written["aggregates"]["agentErrors"] == 0
    assert all(episode["error"] is None and episode["actions"] for episode in written["episodes"])
    # Seeded from the episode id: a second evaluation gives the same actions.
    again = subprocess.run(result.args, cwd=REPO, capture_output=True, text=True, timeout=600, env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(REPO / "python" / "src")})
    assert again.returncode == 0
    assert [episode["actions"] for episode in json.loads(report.read_text())["episodes"]] == [episode["actions"] for episode in written["episodes"]]


def test_bad_actions_and_messages_are_clear_errors():
    class Bad(cerealbar.FollowerAgent):
        def act(self, observation, info):
            return 7

    (reference,) = json.loads(run_typescript("test/env/followerTrajectories.ts", stdin=json.dumps([{"seed": 4, "reward": "sparse", "gamma": 0.99, "maxSteps": 500, "actions": []}])))
    observe = observe_messages([reference["reset"]["observation"]])
    reset = {"type": "reset", "episode": {"episodeId": "e"}}
    with pytest.raises(cerealbar.IllegalActionError, match=r"act returned 7: an action is 0 to 4 \(MF, MB, RL, RR, DONE\)"):
        converse(Bad(), [HELLO, reset, *observe])
    with pytest.raises(AgentProtocolError, match="version 1"):
        converse(Recorder([]), [{**HELLO, "version": 1}])
    with pytest.raises(AgentProtocolError, match="type 'dance'"):
        converse(Recorder([]), [HELLO, {"type": "dance"}])
    with pytest.raises(AgentProtocolError, match="without its map"):
        converse(Recorder([0]), [HELLO, reset, {**observe[0], "observation": {key: value for key, value in observe[0]["observation"].items() if key != "map"}}])
    off_map = {**observe[0]["observation"], "pose": {"x": 99, "y": 0, "heading": "E"}}
    with pytest.raises(cerealbar.InvalidRequestError, match=r"\(99, 0\) is off the 25 x 25 map\n  → at observation.pose"):
        converse(Recorder([0]), [HELLO, reset, {**observe[0], "observation": off_map}])
    with pytest.raises(NotImplementedError, match="write act"):
        converse(cerealbar.FollowerAgent(), [HELLO, reset, *observe])
