"""An exported dataset as a Python user loads it: with the standard json module, and with the
Hugging Face `datasets` library where it is installed (skipped otherwise)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REPO, node


@pytest.fixture(scope="module")
def dataset(selfplay_logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("dataset") / "cerealbar"
    result = subprocess.run(
        [node(), str(REPO / "bin" / "cerealbar.cjs"), "dataset", "export", "--data", str(selfplay_logs), "--out", str(out), "--splits", "0.5,0.5,0"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    return out


def test_the_files_load_with_json(dataset):
    summary = json.loads((dataset / "export.json").read_text())
    assert summary["splits"]["test"]["games"] == 0 and not (dataset / "instructions" / "test.jsonl").exists()
    games = [json.loads(line) for split in ("train", "validation") for line in (dataset / "games" / f"{split}.jsonl").open()]
    assert sorted(game["game_id"] for game in games) == ["selfplay-1", "selfplay-2"]
    instructions = [json.loads(line) for split in ("train", "validation") for line in (dataset / "instructions" / f"{split}.jsonl").open()]
    assert len(instructions) == sum(game["num_instructions"] for game in games)
    done = [instruction for instruction in instructions if instruction["completed"]]
    assert done and all(instruction["actions"][-1] == "DONE" and len(instruction["path"]) == instruction["num_actions"] + 1 for instruction in done)
    # The card's YAML names only the splits that have files.
    assert "instructions/test.jsonl" not in (dataset / "README.md").read_text()


def test_datasets_load_dataset_reads_both_configurations(dataset):
    datasets = pytest.importorskip("datasets", reason="the datasets library is not installed: load_dataset is not tried")
    instructions = datasets.load_dataset(str(dataset), "instructions")
    games = datasets.load_dataset(str(dataset), "games")
    assert set(instructions.keys()) == {"train", "validation"} == set(games.keys())
    assert len(games["train"]) + len(games["validation"]) == 2


def test_imported_cb2_games_are_episodes_of_the_follower_env(tmp_path):
    """Real CB2 games, imported, play as logged episodes: the recorded leader's turns, nDTW rewards."""
    import cerealbar

    out = tmp_path / "cb2"
    result = subprocess.run(
        [node(), str(REPO / "bin" / "cerealbar.cjs"), "import", "cb2", str(REPO / "test" / "fixtures" / "cb2-logs"), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr
    with cerealbar.FollowerEnv(logs=out, reward="ndtw", description=False) as env:
        assert len(env.episodes) == 115 and all(episode.startswith("cb2-") for episode in env.episodes)
        observation, info = env.reset(options={"episode": 0})
        assert observation["instruction"] and info["episode_id"] == env.episodes[0]
        for _ in range(10):
            observation, reward, terminated, truncated, info = env.step(4 if info["action_mask"][4] and _ == 9 else 2)
            if terminated or truncated:
                break
        assert isinstance(reward, float)
