"""Writing requests: ``--dry-run`` on ``experiment`` writes nothing, references by invocation id alone, and
``gpuopt experiment init`` (on the bundled example's root, real driver processes)."""

from __future__ import annotations

import hashlib
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


def _request(example: Path, name: str, **over: Any) -> str:
    req = {**json.loads((example / "requests" / name).read_text()), **over}
    path = example / f"edited-{name}"
    path.write_text(json.dumps(req))
    return path.name


def test_results_print_a_ready_reference_and_requests_take_the_id_alone(example: Path) -> None:
    noise = gpuopt("noise", "--request", "requests/03-noise.json", "--wait", cwd=example)
    assert noise.code == 0, noise.stderr
    data = _run(example, "noise", "--request", "requests/03-noise.json", "--wait")
    ref = data["result_ref"]
    assert (
        ref["sha256"]
        == hashlib.sha256(
            (example / "root" / "invocations" / ref["invocation_id"] / "result.json").read_bytes()
        ).hexdigest()
    )
    line = f"reference: {json.dumps(ref)}"
    assert line in noise.stdout and line in data["summary"]
    status = gpuopt("status", "root", ref["invocation_id"], cwd=example)
    assert json.dumps(ref) in status.stdout
    # The Experiment request names its baseline by id (a bare string, or an object without sha256): the
    # same Experiment as with the full reference.
    full = json.loads((example / "requests" / "05-experiment-wrong.json").read_text())["baseline"]
    want = _run(example, "experiment", "--request", "requests/05-experiment-wrong.json", "--dry-run")
    for short in (full["invocation_id"], {"invocation_id": full["invocation_id"]}):
        req = _request(example, "05-experiment-wrong.json", baseline=short)
        got = _run(example, "experiment", "--request", req, "--dry-run")
        assert got["experiment"] == want["experiment"]
    # The frozen request of a screen holds the full reference of a noise named by id.
    exp = _run(example, "experiment", "--request", "requests/05-experiment-wrong.json")["experiment"]
    req = _request(example, "08-screen-wrong.json", experiment=exp, noise=ref["invocation_id"])
    plan = _run(example, "screen", "--request", req, "--dry-run")["dry_run"]["request"]
    assert json.dumps(ref) in json.dumps(plan) and f'"noise": "{ref["invocation_id"]}"' not in json.dumps(
        plan
    )
    # A wrong sha256 still fails; an unknown id fails with result_not_found.
    bad = _request(example, "08-screen-wrong.json", experiment=exp, noise={**ref, "sha256": "0" * 64})
    run = gpuopt("screen", "--request", bad, "--dry-run", "--json", cwd=example)
    assert run.code == 2 and run.json()["errors"][0]["code"] == "record_changed", run.stdout
    missing = _request(example, "08-screen-wrong.json", experiment=exp, noise="inv-" + "0" * 32)
    run = gpuopt("screen", "--request", missing, "--dry-run", "--json", cwd=example)
    assert run.code == 2 and run.json()["errors"][0]["code"] == "result_not_found", run.stdout
