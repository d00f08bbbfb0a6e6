"""Frames: render_mode="rgb_array" with the 3D cameras and observation_mode="pixels", drawn by the
frame renderer (`cerealbar frames`, headless Chromium).

The tests with the real renderer need the built client (client/dist/frames/index.html, made by
`npm run build:client`, which `npm test` runs first) and skip without it, saying so. The renderer's
life (it dies and is started again, it refuses, it hangs, it cannot start, it is missing) is also
checked with a stand-in renderer, a small Python script speaking the same protocol, which needs
no browser.
"""

from __future__ import annotations

import gc
import os
import signal
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import cerealbar
from cerealbar import frames
from cerealbar.errors import RendererError, RendererUnavailableError

from conftest import REPO

FRAMES_PAGE = REPO / "client" / "dist" / "frames" / "index.html"
needs_renderer = pytest.mark.skipif(
    not FRAMES_PAGE.is_file(),
    reason=f"{FRAMES_PAGE.relative_to(REPO)} is missing: run `npm run build:client` (npm test does) to test the frames with the real renderer",
)
SIZE = (96, 64)  # (width, height): small frames draw fast


# ---------------------------------------------------------------------------------------------
# With the real renderer.


@needs_renderer
def test_rgb_array_frames_of_every_camera_for_both_roles():
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array", render_size=SIZE) as env:
        assert env.render_camera == "first-person" and env.renderer_pid is None  # the renderer starts at the first frame
        env.reset(seed=3)
        drawn = {}
        for camera in ("first-person", "overhead", "angled"):
            env.render_camera = camera
            frame = env.render()
            assert frame.dtype == np.uint8 and frame.shape == (SIZE[1], SIZE[0], 3), (camera, frame.shape)
            assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 20, camera  # a picture, not a blank
            drawn[camera] = frame
        assert env.renderer_pid is not None
        assert not np.array_equal(drawn["first-person"], drawn["overhead"]) and not np.array_equal(drawn["overhead"], drawn["angled"])
        # "map" is the earlier small top-down picture, 8 pixels a cell.
        env.render_camera = "map"
        assert env.render().shape == (25 * 8, 25 * 8 + 4, 3)
        with pytest.raises(ValueError, match="render_camera must be"):
            env.render_camera = "side"
    with cerealbar.LeaderEnv(render_mode="rgb_array", render_size=SIZE) as env:
        assert env.render_camera == "overhead"
        env.reset(seed=3)
        for camera in ("overhead", "angled", "first-person"):
            env.render_camera = camera
            frame = env.render()
            assert frame.shape == (SIZE[1], SIZE[0], 3) and len(np.unique(frame.reshape(-1, 3), axis=0)) > 20, camera
            drawn[f"leader {camera}"] = frame
    # A follower's frame shows only what it knows: from above, the few cells it has seen of the map
    # the leader's frame shows whole (far fewer colours), in the same game.
    colours = lambda frame: len(np.unique(frame.reshape(-1, 3), axis=0))  # noqa: E731
    assert colours(drawn["overhead"]) < colours(drawn["leader overhead"]) / 2, (colours(drawn["overhead"]), colours(drawn["leader overhead"]))


@needs_renderer
def test_frames_are_deterministic_change_with_a_move_and_survive_the_renderer_dying():
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array", render_size=SIZE) as env:
        env.reset(seed=5)
        start = env.render()
        assert np.array_equal(env.render(), start)
        start[:] = 0  # render() gives a copy: changing it changes no later frame
        start = env.render()
        env.step(0)  # MF
        moved = env.render()
        env.step(3)  # RR
        turned = env.render()
        assert not np.array_equal(moved, start) and not np.array_equal(turned, moved)
        # The same state drawn again in a new scene (a new episode of the same game): the same pixels.
        env.reset(seed=5)
        assert np.array_equal(env.render(), start)

        # The renderer dies (killed): the next frame starts a new one, which draws the same pixels.
        pid = env.renderer_pid
        browser = _descendants(pid)
        assert browser, "the renderer runs a browser"
        os.kill(pid, signal.SIGKILL)
        env.reset(seed=5)
        assert np.array_equal(env.render(), start)
        assert env.renderer_pid not in (None, pid) and env._renderer.restarts == 1
        _wait_gone([pid, *browser])  # nothing of the killed renderer is left

        pid = env.renderer_pid
        browser = _descendants(pid)
    # close() ends the renderer and its browser.
    _wait_gone([pid, *browser])


@needs_renderer
def test_the_pixels_observation_passes_gymnasiums_env_checker():
    gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: check_env is not run")
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make(cerealbar.FOLLOWER_ID, observation_mode="pixels", render_size=SIZE, description=False)
    try:
        space = env.observation_space["image"]
        assert (space.shape, space.dtype, space.low.min(), space.high.max()) == ((SIZE[1], SIZE[0], 3), np.uint8, 0, 255)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)  # reset and step determinism, spaces, and every render mode
    finally:
        env.close()


@needs_renderer
def test_pixels_observations_in_reset_and_step_for_both_roles():
    gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: the spaces are not checked")
    with cerealbar.FollowerEnv(description=False, observation_mode="pixels", render_size=SIZE, render_mode="rgb_array") as env:
        assert env.image_camera == "first-person"
        observation, _ = env.reset(seed=2)
        assert observation in env.observation_space and observation["image"].shape == (SIZE[1], SIZE[0], 3)
        assert {"terrain", "cards", "pose", "instruction", "image"} <= set(observation)
        # render() of the same camera and size is the observation's frame.
        assert np.array_equal(env.render(), observation["image"])
        following, *_ = env.step(2)  # RL: a turn always changes the view (a move may be blocked)
        assert following in env.observation_space and not np.array_equal(following["image"], observation["image"])
    with cerealbar.LeaderEnv(observation_mode="pixels", render_camera="angled", render_size=(40, 30)) as env:
        assert env.image_camera == "angled"
        observation, info = env.reset(seed=2)
        assert observation in env.observation_space and observation["image"].shape == (30, 40, 3)
        observation, *_ = env.step(env.action_space.sample(mask=info["action_mask"]))
        assert observation in env.observation_space
    assert isinstance(env.observation_space, gymnasium.spaces.Dict)


@needs_renderer
def test_a_sync_vector_env_of_pixels_environments():
    gymnasium = pytest.importorskip("gymnasium", reason="Gymnasium is not importable: no vector env")
    envs = gymnasium.make_vec(cerealbar.FOLLOWER_ID, num_envs=2, vectorization_mode="sync", observation_mode="pixels", render_size=(32, 24), description=False)
    try:
        observations, _ = envs.reset(seed=[1, 2])
        assert observations["image"].shape == (2, 24, 32, 3) and observations["image"].dtype == np.uint8
        observations, *_ = envs.step(np.array([0, 2]))
        assert observations["image"].shape == (2, 24, 32, 3)
    finally:
        envs.close()


# ---------------------------------------------------------------------------------------------
# Arguments, and the renderer's life with a stand-in renderer.


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"render_camera": "side"}, "render_camera must be None or one of 'first-person', 'overhead', 'angled', 'map', got 'side'"),
        ({"render_camera": 3}, "render_camera must be"),
        ({"render_size": (0, 10)}, r"render_size must be \(width, height\), two integers from 1 to 4096 pixels"),
        ({"render_size": (4097, 10)}, "render_size must be"),
        ({"render_size": (10,)}, "render_size must be"),
        ({"render_size": "320x240"}, "render_size must be"),
        ({"render_size": (10.0, 10)}, "render_size must be"),
        ({"render_size": (True, 10)}, "render_size must be"),
        ({"render_size": 320}, "render_size must be"),
        ({"observation_mode": "rgb"}, "observation_mode must be None .* or 'pixels'"),
        ({"observation_mode": "pixels", "render_camera": "map"}, "render_camera='map' is only for render()"),
    ],
)
@pytest.mark.parametrize("make", [cerealbar.FollowerEnv, cerealbar.LeaderEnv])
def test_bad_frame_arguments_are_refused(make, arguments, message):
    with pytest.raises(ValueError, match=message):
        make(**arguments)


def test_numpy_sizes_are_taken():
    with cerealbar.FollowerEnv(render_size=np.array([64, 48]), description=False) as env:
        assert env.render_size == (64, 48) and type(env.render_size[0]) is int


def test_vector_envs_refuse_frames_clearly():
    pytest.importorskip("gymnasium", reason="Gymnasium is not importable: no vector envs")
    import gymnasium

    for make in (cerealbar.FollowerVectorEnv, cerealbar.FastFollowerVectorEnv):
        for arguments in ({"observation_mode": "pixels"}, {"render_mode": "rgb_array"}, {"render_camera": "overhead"}, {"render_size": (32, 32)}):
            with pytest.raises(ValueError, match=f"{make.__name__} draws no frames .*vectorization_mode='sync', observation_mode='pixels'"):
                make(2, **arguments)
    with pytest.raises(ValueError, match="FollowerVectorEnv draws no frames"):
        gymnasium.make_vec(cerealbar.FOLLOWER_ID, num_envs=2, vectorization_mode="vector_entry_point", observation_mode="pixels")


def test_a_renderer_that_dies_is_started_again_at_the_next_frame(stand_in_renderer):
    stand_in_renderer("die-after-1")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array", render_size=(8, 6)) as env:
        env.reset(seed=1)
        first = env.render()
        pid = env.renderer_pid
        assert first.shape == (6, 8, 3) and (first == pid % 251).all()
        env.step(0)
        # It dies under this frame: a new one draws it.
        second = env.render()
        assert env.renderer_pid != pid and (second == env.renderer_pid % 251).all() and env._renderer.restarts == 1
        _wait_gone([pid])
        # Killed between frames: the next frame starts a new one too.
        pid = env.renderer_pid
        os.kill(pid, signal.SIGKILL)
        _wait_gone([pid])
        env.step(0)
        assert env.render().shape == (6, 8, 3) and env.renderer_pid != pid and env._renderer.restarts == 2


def test_a_renderer_started_again_that_fails_gives_up_with_the_reason(stand_in_renderer):
    stand_in_renderer("die-then-fail")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array", render_size=(8, 6)) as env:
        env.reset(seed=1)
        env.render()
        env.step(0)
        with pytest.raises(RendererUnavailableError, match=r"did not start .*frames/index.html is missing; run `npm run build:client`.*CEREALBAR_RENDERER"):
            env.render()
        assert env.renderer_pid is None


def test_a_renderer_that_cannot_start_says_why_and_what_to_do(stand_in_renderer):
    stand_in_renderer("fail-start")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array") as env:
        env.reset(seed=1)
        with pytest.raises(RendererUnavailableError) as raised:
            env.render()
        message = str(raised.value)
        assert "\n" not in message and "cannot start the frame renderer: /x/client/dist/frames/index.html is missing" in message
        assert "npm run build:client" in message and "CEREALBAR_RENDERER" in message
        # The environment goes on without frames.
        env.step(0)
    # In the pixels mode, reset raises it.
    with cerealbar.FollowerEnv(description=False, observation_mode="pixels") as env:
        with pytest.raises(RendererUnavailableError, match="did not start"):
            env.reset(seed=1)


def test_a_refused_frame_and_a_renderer_that_hangs_raise(stand_in_renderer):
    stand_in_renderer("refuse")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array") as env:
        env.reset(seed=1)
        with pytest.raises(RendererError, match="the frame renderer refused a frame: not a frame request: camera: Invalid option"):
            env.render()
    stand_in_renderer("hang-after-1")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array", timeout=1.0) as env:
        env.reset(seed=1)
        env.render()
        pid = env.renderer_pid
        env.step(0)
        with pytest.raises(RendererError, match="drew no frame within 1 s; its process was killed"):
            env.render()
        _wait_gone([pid])
        assert env.renderer_pid is None


def test_a_missing_renderer_gives_one_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("CEREALBAR_RENDERER", str(tmp_path / "no-such-renderer") + " frames")
    with cerealbar.FollowerEnv(description=False, render_mode="rgb_array") as env:
        env.reset(seed=1)
        with pytest.raises(RendererUnavailableError) as raised:
            env.render()
    message = str(raised.value)
    assert message.startswith("cannot run the frame renderer (CEREALBAR_RENDERER: ") and "No such file or directory" in message
    assert "npm run build:client" in message and "\n" not in message
    # None anywhere: not set, not run from a clone, no `cerealbar` on PATH.
    monkeypatch.delenv("CEREALBAR_RENDERER")
    monkeypatch.setattr(frames, "REPOSITORY_CLI", tmp_path / "bin" / "cerealbar.cjs")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RendererUnavailableError, match="no frame renderer: CEREALBAR_RENDERER is not set, .* no `cerealbar` is on PATH; .*npm run build:client"):
        frames.renderer_command()
    monkeypatch.setenv("CEREALBAR_RENDERER", "'unclosed")
    with pytest.raises(RendererUnavailableError, match="is not a command line"):
        frames.renderer_command()


def test_the_renderer_ends_with_close_and_with_garbage_collection(stand_in_renderer):
    stand_in_renderer("ok")
    env = cerealbar.FollowerEnv(description=False, observation_mode="pixels", render_size=(8, 6))
    env.reset(seed=1)
    pid = env.renderer_pid
    env.close()
    _wait_gone([pid])
    assert env.renderer_pid is None
    env.close()  # twice is allowed
    with pytest.raises(cerealbar.EnvClosedError):
        env.render()

    env = cerealbar.FollowerEnv(description=False, observation_mode="pixels", render_size=(8, 6))
    env.reset(seed=1)
    pid = env.renderer_pid
    del env
    gc.collect()
    _wait_gone([pid])


def test_the_repository_renderer_is_found_relative_to_the_package(monkeypatch):
    monkeypatch.delenv("CEREALBAR_RENDERER", raising=False)
    assert frames.REPOSITORY_CLI == REPO / "bin" / "cerealbar.cjs"
    command, origin = frames.renderer_command()
    assert origin == "this repository" and command[1:] == [str(REPO / "bin" / "cerealbar.cjs"), "frames"]
    assert Path(command[0]).name.startswith("node") or command[0] == os.environ.get("CEREALBAR_NODE")


# ---------------------------------------------------------------------------------------------


def _descendants(pid: int) -> list[int]:
    """The processes below `pid` (a browser and its helpers), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _wait_gone(pids: list[int], within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return
        time.sleep(0.05)
    raise AssertionError(f"processes {[pid for pid in pids if _alive(pid)]} still run {within} s later")
