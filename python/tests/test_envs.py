"""FollowerEnv and LeaderEnv through their Python API: reset and step, logged episodes, the leader's
instructions, rendering, and the same classes without Gymnasium."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cerealbar
from conftest import REPO


def test_follower_reset_and_step_have_gymnasiums_shapes():
    with cerealbar.FollowerEnv(reward="distance") as env:
        observation, info = env.reset(seed=5)
        assert env.layout.actions == ["MF", "MB", "RL", "RR", "DONE"]
        assert info["episode_id"] == "selfplay-5"
        assert observation["terrain"].shape == (25, 25) and observation["terrain"].dtype == np.uint8
        assert observation["cards"].shape == (25, 25, 4)
        assert observation["instruction"] and observation["description"].startswith("You face")
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].shape == (5,)
        assert info["potential"] < 0  # the distance to the instruction's card
        observation, reward, terminated, truncated, info = env.step(2)  # RL
        assert (type(reward), terminated, truncated, info["steps"]) == (float, False, False, 1)
        assert reward == info["points"] + info["shaping"]
        # An observation is its own: it stays as it was, and writable, after later steps.
        pose = observation["pose"].copy()
        env.step(2)
        assert np.array_equal(observation["pose"], pose)
        observation["pose"][0] = 99


def test_the_follower_sees_only_its_view():
    with cerealbar.FollowerEnv() as env:
        observation, _ = env.reset(seed=9)
    unseen = env.layout.codes["terrain"].index("unseen")
    seen = observation["terrain"] != unseen
    assert 0 < seen.sum() < 0.3 * seen.size
    # Cards are known only on cells it has seen; cards in view now are on visible cells.
    has_card = observation["cards"][..., 0] > 0
    assert not (has_card & ~seen).any()
    assert (observation["visible"][observation["card_seen_ago"] == 0] == 1).all()


def test_logged_episodes(selfplay_logs):
    with cerealbar.FollowerEnv(logs=selfplay_logs, reward="ndtw", description=False) as env:
        assert env.episodes[0] == "selfplay-1#0" and any(episode.startswith("selfplay-2#") for episode in env.episodes)
        assert "description" not in env.reset(options={"episode": 0})[0]
        _, info = env.reset(options={"episode": "selfplay-2#3"})
        assert info["episode_id"] == "selfplay-2#3"
        # reset() draws an episode with the env's generator: the same seed, the same episode.
        drawn = [env.reset(seed=4)[1]["episode_id"], env.reset()[1]["episode_id"], env.reset(seed=4)[1]["episode_id"]]
        assert drawn[0] == drawn[2] and drawn[0] in env.episodes
        with pytest.raises(ValueError, match="no episode 'nope'"):
            env.reset(options={"episode": "nope"})


def test_leader_instructions_and_refusals():
    with cerealbar.LeaderEnv() as env:
        observation, info = env.reset(seed=3)
        assert env.layout.actions == ["MF", "MB", "RL", "RR", "END", "INSTRUCTION"]
        # Gymnasium's form for a Dict action space: action_space.sample(mask=info["action_mask"]) works.
        assert info["action_mask"]["action"].tolist()[4:] == [0, 1] and info["action_mask"]["instruction"] is None  # nothing to end the turn for; may instruct
        assert (observation["terrain"] >= env.layout.codes["terrain"].index("grass")).all()  # the whole map
        assert (observation["cards"][..., 0] > 0).sum() == 21
        _, reward, _, _, info = env.step(4)  # END with an empty queue
        assert (reward, info["refused"]) == (0.0, "EMPTY_QUEUE")
        observation, _, _, _, info = env.step({"action": 5, "instruction": "get the 2 red stars"})
        assert (observation["queue"], observation["queue_length"].tolist(), info["refused"]) == ("get the 2 red stars", [1], "")
        # END: the follower's turn is played inside this step, and it carries the instruction out.
        observation, _, _, _, info = env.step({"action": 4, "instruction": "ignored"})
        assert info["follower_actions"] > 0 and info["action_mask"]["action"][4] == 0
        assert (observation["queue"], observation["queue_length"].tolist()) == ("", [0])
        assert observation["previous_instruction"] == "get the 2 red stars"


def test_render_ansi_and_rgb_array():
    with cerealbar.FollowerEnv(render_mode="ansi") as env:
        env.reset(seed=2)
        text = env.render()
        assert "F follower" in text and "? not seen yet" in text
    # The small top-down picture of the observation is render_camera "map" (the 3D cameras: test_frames.py).
    with cerealbar.LeaderEnv(render_mode="rgb_array", render_camera="map") as env:
        observation, _ = env.reset(seed=2)
        picture = env.render()
        assert picture.dtype == np.uint8 and picture.shape == (25 * 8, 25 * 8 + 4, 3)
        assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 5
    with cerealbar.FollowerEnv() as env:
        env.reset(seed=2)
        assert env.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        cerealbar.FollowerEnv(render_mode="human")


def test_without_gymnasium_the_envs_are_plain_classes_with_the_same_methods():
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["gymnasium"] = None  # as if it were not installed
        sys.path.insert(0, {str(REPO / "python" / "src")!r})
        import cerealbar
        env = cerealbar.FollowerEnv()
        assert env.observation_space is None and env.action_space is None
        observation, info = env.reset(seed=3)
        observation, reward, terminated, truncated, info = env.step(0)
        assert isinstance(reward, float) and info["steps"] == 1
        drawn = []
        for _ in range(2):
            env.reset(seed=8)
            drawn.append(env.reset()[1]["episode_id"])
        assert drawn[0] == drawn[1], drawn
        env.close()
        with cerealbar.LeaderEnv() as leader:
            leader.reset(seed=1)
            leader.step({{"action": 5, "instruction": "get the 1 red star"}})
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ok", result.stderr
