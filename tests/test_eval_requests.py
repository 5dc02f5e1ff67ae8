"""Writing requests: ``--dry-run`` on ``experiment`` writes nothing, references by invocation id alone, and
``gpuopt experiment init`` (on the bundled example's root, real driver processes)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import Example, copy_of_example, gpuopt
from gpuopt.schemas import json_schema


@pytest.fixture(scope="module")
def example(example_made_once: Example, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_of_example(example_made_once, tmp_path_factory.mktemp("requests") / "demo")


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


def _fill(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {k: answers.get(k, _fill(v, answers)) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, answers) for v in value]
    return "filled in by hand" if isinstance(value, str) and value.startswith("<FILL: ") else value


def test_experiment_init_writes_a_skeleton_that_dry_runs_once_filled(example: Path) -> None:
    root = example / "root"
    before = _tree(root)
    run = gpuopt("experiment", "init", "root", "--out", "skeleton.json", "--json", cwd=example)
    assert run.code == 0, run.stdout + run.stderr
    jsonschema.validate(run.json(), json_schema("gpuopt.experiment-init/v1"))
    data = run.json()["data"]
    skeleton = json.loads((example / "skeleton.json").read_text())
    assert skeleton == data["request"] and data["out"] == "skeleton.json"
    target = json.loads((root / "target.json").read_bytes())
    assert skeleton["target"] == {
        "id": target["id"],
        "sha256": hashlib.sha256((root / "target.json").read_bytes()).hexdigest(),
    }
    assert skeleton["root"] == "root" and skeleton["claim_layer"] == target["claim_layer"]
    baseline = json.loads((example / "requests" / "04-experiment-faster.json").read_text())["baseline"]
    assert skeleton["baseline"] == baseline  # the newest passed baseline of the root
    noise = json.loads((example / "requests" / "03-noise.json").read_text())["acquisition"]
    assert skeleton["contract"] == {"lifecycle": "same_process", **noise}  # what the A/A pairs ran under
    assert any(f.startswith("contract: as the newest passed noise measurement inv-") for f in data["filled"])
    assert "candidate.path: the candidate's file or folder" in data["placeholders"]
    assert len(data["placeholders"]) == 16
    assert _tree(root) == before
    # Unfilled: refused by name; filled: accepted by the dry run.
    run = gpuopt("experiment", "--request", "skeleton.json", "--dry-run", "--json", cwd=example)
    error = run.json()["errors"][0]
    assert run.code == 2 and (error["code"], error["path"]) == ("placeholder_unfilled", "candidate.path")
    answers = {"path": "project/candidates/no_effect", "mechanism": "rename-again"}
    filled = _fill(skeleton, answers)
    filled["change_scope"] = ["layernorm.py"]
    (example / "filled.json").write_text(json.dumps(filled))
    plan = _run(example, "experiment", "--request", "filled.json", "--dry-run")
    assert plan["dry_run"] is True and plan["created"] is True and plan["mechanism"] == "rename-again"
    assert _tree(root) == before
    # Printed to stdout: the same JSON; an existing --out file is never overwritten.
    printed = gpuopt("experiment", "init", "root", cwd=example)
    assert printed.code == 0 and json.loads(printed.stdout) == skeleton and "fill in" in printed.stderr
    again = gpuopt("experiment", "init", "root", "--out", "skeleton.json", "--json", cwd=example)
    assert again.code == 2 and again.json()["errors"][0]["code"] == "destination_exists"
    assert gpuopt("experiment", "init", "--json", cwd=example).json()["errors"][0]["code"] == "root_required"
