"""Misuse and failures give clear Python exceptions, and never leave a Node process hanging."""

from __future__ import annotations

import gc
import os
import signal
import time
import weakref

import numpy as np
import pytest

import cerealbar
from cerealbar.engine import EngineProcess


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process `pid` has exited (and been reaped) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("action", [5, -1, 1.5, "MF", None, np.array([0, 1])])
def test_an_action_outside_the_action_space(action):
    with cerealbar.FollowerEnv() as env:
        env.reset(seed=1)
        with pytest.raises(cerealbar.IllegalActionError, match=r"integer from 0 to 4 \(MF, MB, RL, RR, DONE\)"):
            env.step(action)
        env.step(np.int64(0))  # numpy integers are actions too, and the episode goes on


def test_a_leader_action_outside_the_action_space():
    with cerealbar.LeaderEnv() as env:
        env.reset(seed=1)
        with pytest.raises(cerealbar.IllegalActionError, match="INSTRUCTION needs its text"):
            env.step(5)
        with pytest.raises(cerealbar.IllegalActionError, match="'action': index"):
            env.step({"instruction": "get the red star"})
        with pytest.raises(cerealbar.IllegalActionError, match="integer from 0 to 5"):
            env.step({"action": 6})
        with pytest.raises(cerealbar.IllegalActionError, match="not valid Unicode"):
            env.step({"action": 5, "instruction": "\ud800"})


def test_step_before_reset_and_after_the_episode_ended():
    with cerealbar.FollowerEnv(max_steps=3) as env:
        with pytest.raises(cerealbar.EpisodeOverError, match="call reset"):
            env.step(0)
        env.reset(seed=1)
        results = [env.step(2) for _ in range(3)]
        assert results[-1][3] is True  # truncated at max_steps
        with pytest.raises(cerealbar.EpisodeOverError):
            env.step(2)
        env.reset(seed=1)
        env.step(2)


def test_a_closed_environment():
    env = cerealbar.FollowerEnv(render_mode="ansi")
    env.reset(seed=1)
    pid = env.engine_pid
    env.close()
    env.close()  # closing twice is allowed
    assert gone(pid)
    for call in (lambda: env.reset(seed=1), lambda: env.step(0), env.render):
        with pytest.raises(cerealbar.EnvClosedError):
            call()


def test_an_environment_nobody_closed_stops_its_process_when_collected():
    env = cerealbar.FollowerEnv()
    pid = env.engine_pid
    collected = weakref.ref(env)
    del env
    gc.collect()
    assert collected() is None and gone(pid)


def test_a_dead_node_process_is_reported_and_the_next_reset_starts_a_new_one():
    with cerealbar.FollowerEnv() as env:
        env.reset(seed=1)
        pid = env.engine_pid
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(cerealbar.EngineCrashedError, match=r"exited \(code -9\)"):
            env.step(0)
        with pytest.raises(cerealbar.EpisodeOverError):
            env.step(0)
        observation, info = env.reset(seed=1)
        assert env.engine_pid != pid and info["episode_id"] == "selfplay-1"
        env.step(0)


def test_a_crash_is_reported_with_the_end_of_the_childs_stderr(fake_node):
    fake_node("v20.0.0", "echo 'first line' >&2; echo 'boom: the engine fell over' >&2; exit 3")
    with pytest.raises(cerealbar.EngineCrashedError, match=r"(?s)code 3.*boom: the engine fell over") as failure:
        cerealbar.FollowerEnv()
    assert failure.value.exit_code == 3 and "first line" in failure.value.stderr_tail


def test_a_silent_engine_times_out_and_is_killed(fake_node, tmp_path):
    pid_file = tmp_path / "pid"
    fake_node("v22.1.0", f"echo $$ > {pid_file}; exec sleep 30")
    started = time.monotonic()
    with pytest.raises(cerealbar.EngineTimeoutError, match="within 0.5 s"):
        EngineProcess(timeout=0.5)
    assert time.monotonic() - started < 5
    assert gone(int(pid_file.read_text()))


def test_node_missing_or_too_old(fake_node, monkeypatch):
    monkeypatch.setenv("CEREALBAR_NODE", "no-such-node-anywhere")
    with pytest.raises(cerealbar.NodeUnavailableError, match="cannot find 'no-such-node-anywhere'.*Node.js 20 or newer"):
        cerealbar.FollowerEnv()
    fake_node("v18.19.1", "exit 0")
    with pytest.raises(cerealbar.NodeUnavailableError, match="v18.19.1; the engine needs 20 or newer"):
        cerealbar.LeaderEnv()


def test_arguments_the_engine_refuses():
    with pytest.raises(cerealbar.InvalidRequestError, match="bad make options"):
        cerealbar.FollowerEnv(reward="dense")
    with pytest.raises(cerealbar.InvalidRequestError, match="ndtw.*logs"):
        cerealbar.FollowerEnv(reward="ndtw")
    with pytest.raises(cerealbar.InvalidRequestError, match="bad make options"):
        cerealbar.LeaderEnv(follower="oracle")
    with pytest.raises(FileNotFoundError):
        cerealbar.FollowerEnv(logs="no/such/logs")
    with cerealbar.FollowerEnv() as env:
        # Self-play game 139765 ends before the follower's first turn: asked for by name, it is refused...
        with pytest.raises(cerealbar.InvalidRequestError, match="139765.*before the follower got a turn") as refused:
            env.reset(seed=139765)
        assert refused.value.kind == "setup"
        with pytest.raises(ValueError, match="unknown reset options"):
            env.reset(options={"level": 2})
        with pytest.raises(ValueError, match="needs an environment made with logs"):
            env.reset(options={"episode": 0})
        with pytest.raises(cerealbar.InvalidRequestError, match=r"seed must be None or an integer from 0 to 4294967295 .*, got 4294967296"):
            env.reset(seed=2**32)
        env.reset(seed=1)  # ...and the env still works
