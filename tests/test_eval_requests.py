"""Writing requests: ``--dry-run`` on ``experiment`` writes nothing, references by invocation id alone, and
``gpuopt experiment init`` (on the bundled example's root, real driver processes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("requests")
    run = gpuopt("example", "run", str(base / "demo"), "--json")
    assert run.code == 0, run.stderr[-3000:]
    return base / "demo"


def _tree(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*")}


def _run(folder: Path, *args: str) -> dict[str, Any]:
    run = gpuopt(*args, "--json", cwd=folder)
    assert run.code == 0, run.stdout + run.stderr
    return json.loads(run.stdout)["data"]  # type: ignore[no-any-return]


def test_experiment_dry_run_writes_nothing_and_names_the_record_a_real_run_creates(example: Path) -> None:
    root = example / "root"
    before = _tree(root)
    req = "requests/06-experiment-no_effect.json"  # the Champion moved: a new Experiment
    plan = _run(example, "experiment", "--request", req, "--dry-run")
    assert plan["dry_run"] is True and plan["created"] is True
    assert plan["changed_paths"] == ["layernorm.py"]
    assert _tree(root) == before
    human = gpuopt("experiment", "--request", req, "--dry-run", cwd=example)
    assert human.code == 0 and "dry run: nothing written" in human.stdout
    done = _run(example, "experiment", "--request", req)
    assert done["dry_run"] is False and done["created"] is True
    assert done["experiment"] == plan["experiment"]  # same id and sha256
    assert (root / "experiments" / f"{done['experiment']['id']}.json").is_file()
    again = _run(example, "experiment", "--request", req, "--dry-run")
    assert again["created"] is False
