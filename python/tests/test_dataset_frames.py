"""A dataset exported with frames as a Python user loads it: the Parquet image column decoded by the
Hugging Face `datasets` library where it is installed (skipped otherwise)."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REPO, node


def test_datasets_load_dataset_decodes_the_frames_to_images(selfplay_logs, tmp_path):
    datasets = pytest.importorskip("datasets", reason="the datasets library is not installed: load_dataset is not tried")
    if not (REPO / "client" / "dist" / "frames" / "index.html").exists():
        pytest.skip("the client is not built (npm run build:client): no frames can be drawn")
    out = tmp_path / "with-frames"
    result = subprocess.run(
        [node(), str(REPO / "bin" / "cerealbar.cjs"), "dataset", "export", "--data", str(selfplay_logs), "--out", str(out),
         "--format", "parquet", "--splits", "1,0,0", "--frames", "follower", "--frames-every-step", "--frame-size", "32x24"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr
    train = datasets.load_dataset(str(out), "instructions")["train"]
    assert isinstance(train.features["follower_frame"], datasets.Image)
    row = next(row for row in train if row["follower_frame"] is not None)
    assert row["follower_frame"].size == (32, 24)
    # `path` is JSON text in Parquet: one step frame per pose.
    assert len(row["follower_step_frames"]) == len(json.loads(row["path"]))
