"""Execution maps in an artifact root (spec §8, acceptance 54): ``map account --root`` publishes a create-once
record bound to the root's Target; an Experiment's opportunity input citing it resolves the selected
``share_of_window``, and a mismatched value, an unresolvable ref or a map of another Target is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from eval_support import workload
from gpuopt import map as maps
from gpuopt.errors import InputError
from gpuopt.evaluation import experiment, jsonio, operations, readiness
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.verify import verify
from gpuopt.models.evaluation.common import RecordRef

FAST = {"command_timeout_s": 20, "termination_grace_s": 0.3, "cleanup_timeout_s": 10}
EVENTS = [
    {"timeline": "s1", "start_ns": 0, "end_ns": 10, "category": "k", "name": "a"},
    {"timeline": "s2", "start_ns": 5, "end_ns": 15, "category": "k", "name": "b"},
    {"timeline": "s1", "start_ns": 15, "end_ns": 20, "category": "k", "name": "a"},
]
SLOW = "import time\n\n\ndef run(case):\n    time.sleep(0.002)\n    return sum(case['values'])\n"


class Root:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.layout = workload.layout(base / "w")
        (self.layout["src"] / "impl.py").write_text(SLOW)
        self.root = base / "root"
        readiness.check(json.dumps(workload.request(self.layout, self.root)).encode())
        self.store = Store(self.root)
        target, _ = targets.load(self.store)
        self.target = targets.optimizable(target)
        self.events = base / "events.jsonl"
        self.events.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Root:
    return Root(tmp_path_factory.mktemp("map"))


def _code(fn: Any, *args: Any, **kw: Any) -> tuple[str, str | None]:
    with pytest.raises(InputError) as info:
        fn(*args, **kw)
    return info.value.code, info.value.path


def _account(r: Root, **kw: Any) -> maps.MapResult:
    return maps.account(r.events, root=r.root, bind_variant=r.target.original.digest, case="a", **kw)


def test_map_record_is_create_once_and_bound(root: Root) -> None:
    out = _account(root)
    assert out.data.created is True
    ref = out.data.record
    assert ref is not None and ref.id.startswith("map-")
    rel = f"maps/{ref.id}.json"
    data = root.store.read_bytes(rel)
    assert jsonio.sha256_hex(data) == ref.sha256
    record = maps.load(root.store, ref)
    assert record.format == "gpuopt.execution-map/v1"
    assert record.binding.model_dump() == {
        "target_id": root.target.id,
        "variant_digest": root.target.original.digest,
        "case_id": "a",
    }
    assert record.id == "map-" + jsonio.digest(record.model_dump(exclude={"id"}))
    # the event file is frozen into the root: its one blob is the file read
    assert record.source.digest is not None
    manifest = root.store.manifest(record.source.digest)
    assert [e.sha256 for e in manifest.entries if e.kind == "file"] == [record.source.sha256]
    assert (record.totals.union_ns, record.totals.overlap_excess_ns) == (20, 5)
    again = _account(root)
    assert (again.data.created, again.data.record) == (False, ref)
    lines = [line for line in root.store.ledger() if line.kind == "map"]
    assert [line.id for line in lines] == [ref.id]
    report = verify(root.store, deep=True)
    assert report.ok, report.defects  # the map's record, ledger line and frozen event file among them
    # a different window is another map
    other = _account(root, window="0:40")
    assert other.data.record is not None and other.data.record.id != ref.id
    assert other.data.groups[0].share_of_window == 15 / 40


def test_binding_is_checked_against_the_target(root: Root) -> None:
    digest = root.target.original.digest
    assert _code(maps.account, root.events, root=root.root, bind_variant="f" * 64, case="a")[0] == (
        "map_binding_invalid"
    )
    assert _code(maps.account, root.events, root=root.root, bind_variant=digest, case="zz") == (
        "map_binding_invalid",
        "binding.case_id",
    )
    assert _code(maps.account, root.events, root=root.base / "none", bind_variant=digest, case="a")[0] == (
        "root_not_found"
    )


def _claim(
    value: float, source: dict[str, Any], *, unit: str = "fraction", cls: str = "same_boundary"
) -> Any:
    return {
        "quantified": True,
        "boundary": {"region": "r", "entry": "e", "exit": "x", "phase": "p", "shapes": []},
        "execution_form": {"form": "f", "lowering": "l", "dispatch": "d", "fallback": "n", "overlap": "n"},
        "inputs": [
            {"name": "f", "value": value, "unit": unit, "class": cls, "source": source},
            {
                "name": "k",
                "value": 1.5,
                "unit": "x",
                "class": "conservative_bound",
                "source": {"kind": "external", "text": "a bound"},
            },
        ],
        "coverage": {"input": "f"},
        "local_saving": {"input": "k", "form": "speedup"},
    }


def _source(ref: RecordRef, name: str = "a") -> dict[str, Any]:
    return {
        "kind": "execution_map",
        "ref": ref.model_dump(),
        "select": {"group": {"category": "k", "name": name}, "quantity": "share_of_window"},
    }


def test_opportunity_input_resolves_the_map(root: Root) -> None:
    from gpuopt.models.evaluation.experiment import OpportunityClaim

    ref = _account(root).data.record
    assert ref is not None

    def opportunity(claim: dict[str, Any]) -> Any:
        return experiment.opportunity(
            jsonio.validate(OpportunityClaim, claim, what="claim"), root.target, root.store
        )

    out = opportunity(_claim(0.75, _source(ref)))
    assert out.f == 0.75
    assert out.ceiling_pct == pytest.approx(100 * (1 / (1 - 0.75 / 3) - 1))
    assert opportunity(_claim(75.0, _source(ref), unit="percent")).f == 0.75
    assert opportunity(_claim(0.75 * (1 + 5e-10), _source(ref))).f == pytest.approx(0.75)

    def code(claim: dict[str, Any]) -> tuple[str, str | None]:
        return _code(opportunity, claim)

    assert code(_claim(0.7, _source(ref))) == (
        "opportunity_source_mismatch",
        "opportunity_claim.inputs[0].value",
    )
    assert code(_claim(0.75 * (1 + 1e-8), _source(ref)))[0] == "opportunity_source_mismatch"
    assert code(_claim(0.75, _source(ref, name="zz")))[0] == "opportunity_source_mismatch"
    stale = RecordRef(id=ref.id, sha256="0" * 64)
    assert code(_claim(0.75, _source(stale)))[0] == "opportunity_source_mismatch"
    no_select = {k: v for k, v in _source(ref).items() if k != "select"}
    assert code(_claim(0.75, no_select))[0] == "opportunity_source_mismatch"
    bad_ref = {**_source(ref), "ref": {"id": "../x", "sha256": ref.sha256}}
    assert code(_claim(0.75, bad_ref))[0] == "opportunity_source_mismatch"

    # a map bound to another Target: allowed as a conservative bound, refused as same_boundary
    foreign = maps.load(root.store, ref).model_dump()
    foreign["binding"]["target_id"] = "tgt-" + "e" * 64
    core = {k: v for k, v in foreign.items() if k != "id"}
    foreign["id"] = "map-" + jsonio.digest(core)
    published = root.store.write_record(f"maps/{foreign['id']}.json", foreign)
    fref = RecordRef(id=foreign["id"], sha256=published.sha256)
    assert code(_claim(0.75, _source(fref))) == (
        "opportunity_boundary_mismatch",
        "opportunity_claim.inputs[0].source.ref",
    )
    assert opportunity(_claim(0.75, _source(fref), cls="conservative_bound")).f == 0.75


def test_experiment_cites_a_map_end_to_end(root: Root, tmp_path: Path) -> None:
    """CLI account -> map record -> ``gpuopt experiment`` whose coverage input cites it."""
    digest = root.target.original.digest
    cli = [sys.executable, "-m", "gpuopt", "map", "account", str(root.events), "--json"]
    run = subprocess.run(
        [*cli, "--root", str(root.root), "--bind-variant", digest, "--case", "b"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    env = json.loads(run.stdout)
    assert env["data"]["binding"]["case_id"] == "b"
    ref = RecordRef.model_validate(env["data"]["record"])
    baseline = operations.run(
        "baseline",
        {
            "root": str(root.root),
            "limits": FAST,
            "plan": {"case_ids": ["a"], "samples_per_call": 3, "warmup_per_call": 0},
        },
        wait=True,
    )
    candidate = tmp_path / "cand"
    candidate.mkdir()
    (candidate / "impl.py").write_text("def run(case):\n    return sum(case['values'])\n")
    request = {
        "root": str(root.root),
        "baseline": baseline.result_ref.model_dump(),
        "source_base": "original",
        "candidate": {"kind": "source", "path": str(candidate)},
        "change_scope": ["impl.py"],
        "claim_layer": "workload",
        "hypothesis": "dropping the sleep removes group k/a",
        "mechanism": "no-sleep",
        "rejection_scope": "implementation",
        "contract": {"lifecycle": "isolated"},
        "screen": {"kind": "proxy", "minimum_pairs": 2, "reject_if": ["primary_regressed"], "claim": "local"},
        "opportunity_claim": _claim(0.75, _source(ref)),
    }
    created = experiment.create(json.dumps(request).encode())
    assert created.created is True
    assert created.opportunity.f == 0.75
    request["opportunity_claim"] = _claim(0.5, _source(ref))
    assert _code(experiment.create, json.dumps(request).encode()) == (
        "opportunity_source_mismatch",
        "opportunity_claim.inputs[0].value",
    )
