"""The regression gate (``gpuopt gate``) on the tiny fixture workload (real supervisors and driver
processes): saved baselines, paired checks that pass, improve, regress and fail correctness with their
exit codes, export/import into another root of the same Target with the same verdicts, identity
mismatches before and during the run, the unpaired mode, the Markdown and JUnit outputs (JUnit validated
against the Jenkins xUnit plugin's junit-10.xsd), and the typed errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from eval_support import workload
from gpuopt.errors import InputError
from gpuopt.evaluation import operations, readiness
from gpuopt.evaluation.gate import baselines, bundle
from gpuopt.evaluation.gate import store as gates
from gpuopt.evaluation.gate.check import CheckRequest, check
from gpuopt.evaluation.store import Store

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

FAST = {"command_timeout_s": 20, "termination_grace_s": 0.3, "cleanup_timeout_s": 10}
IMPLS = {
    "original": "import time\n\n\ndef run(case):\n    time.sleep(0.004)\n    return sum(case['values'])\n",
    "no_effect": (
        "import time\n\n\ndef run(case):\n    # renamed\n    time.sleep(0.004)\n"
        "    return sum(case['values'])\n"
    ),
    "slower": "import time\n\n\ndef run(case):\n    time.sleep(0.012)\n    return sum(case['values'])\n",
    "faster": "def run(case):\n    return sum(case['values'])\n",
    "wrong": "import time\n\n\ndef run(case):\n    time.sleep(0.004)\n    return sum(case['values']) + 1\n",
}
XSD = Path(__file__).parent / "data" / "junit" / "junit-10.xsd"


class Gate:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.layout = workload.layout(base / "w")
        (self.layout["src"] / "impl.py").write_text(IMPLS["original"])
        self.src: dict[str, Path] = {}
        for name, code in IMPLS.items():
            folder = base / "code" / name
            folder.mkdir(parents=True)
            (folder / "impl.py").write_text(code)
            self.src[name] = folder
        self.root = base / "root"
        request = workload.request(
            self.layout,
            self.root,
            # Each call's value is the minimum of its samples: on a loaded machine preemption only adds time.
            metrics={
                "step_time_ms": {"unit": "ms", "direction": "lower", "kind": "duration", "within_call": "min"}
            },
            objective={"primary": "step_time_ms", "minimum_effect_pct": 25},
            statistics={"seed": 7, "minimum_pairs": 2, "resamples": 1000},
        )
        readiness.check(json.dumps(request).encode())
        plan = {"case_ids": ["a", "b"], "samples_per_call": 7, "warmup_per_call": 1}
        self.baseline = self.run("baseline", {"plan": {**plan, "calls_per_case": 3}})
        self.noise = self.run("noise", {"plan": {**plan, "pairs": 4}})
        # Another job's root of the same Target, restored from a cache before any baseline was saved.
        self.other = base / "other-root"
        shutil.copytree(self.root, self.other, symlinks=True)

    def run(self, operation: str, request: dict[str, Any]) -> Any:
        out = operations.run(operation, {"root": str(self.root), "limits": FAST, **request}, wait=True)
        assert out.result is not None and out.result.measurement_validity == "valid"
        return out.result

    def check(self, name: str, source: str, root: Path | None = None, **kw: Any) -> Any:
        return check(CheckRequest(root=root or self.root, name=name, source=self.src[source], **kw))


@pytest.fixture(scope="module")
def g(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    gate = Gate(tmp_path_factory.mktemp("gate"))
    baselines.save(
        gate.root, "main", sources_=[gate.noise.invocation_id], role=None, captures=[], replace=False
    )
    return gate


def test_save_binds_the_target_and_runtime(g: Gate) -> None:
    shown = baselines.show(g.root, "main")
    record = shown.baseline
    samples = record.samples
    assert samples is not None and samples.role == "reference"
    assert record.target.id == Store(g.root).target_ref().id
    assert samples.plan.pairs == 4 and samples.plan.case_ids == ["a", "b"]
    assert len(samples.calls) == 8 and {c.session for c in samples.calls} == {g.noise.invocation_id}
    assert record.runtime["reported.frameworks.python"] is not None and "host.host_id" in record.runtime
    assert shown.objects_present
    assert gates.baseline_id(record.model_dump(mode="json")) == record.id
    # the same sources give the same content-addressed record
    again = baselines.save(
        g.root, "main2", sources_=[g.noise.invocation_id], role=None, captures=[], replace=False
    )
    assert again.saved.baseline == shown.name.baseline and not again.created
    listed = baselines.listing(g.root)
    assert [b.name for b in listed.baselines] == ["main", "main2"]
    removed = baselines.delete(g.root, "main2")
    assert removed.record_removed is False  # "main" still points at it


def test_no_effect_passes_and_slower_regresses(g: Gate) -> None:
    passed = g.check("main", "no_effect")
    assert (passed.outcome, passed.exit_code, passed.mode) == ("pass", 0, "paired"), passed.summary
    assert passed.result is not None and passed.result.operation == "gate"
    assert passed.result.statistics is not None and passed.result.statistics.primary.n_valid == 8
    slower = g.check("main", "slower")
    assert (slower.outcome, slower.exit_code) == ("regression", 10)
    assert slower.result is not None and slower.result.verdict == "rejected"
    assert slower.reasons[0].code == "primary_regressed"
    faster = g.check("main", "faster")
    assert (faster.outcome, faster.exit_code) == ("improvement", 0)
    wrong = g.check("main", "wrong")
    assert (wrong.outcome, wrong.exit_code) == ("correctness_failed", 14)


def test_identical_request_is_deduplicated_and_a_seed_measures_again(g: Gate) -> None:
    first = g.check("main", "no_effect")
    assert first.attempts[0].deduplicated
    fresh = g.check("main", "no_effect", seed=99)
    assert (
        not fresh.attempts[0].deduplicated
        and fresh.attempts[0].invocation_id != first.attempts[0].invocation_id
    )


def test_cli_exit_codes_markdown_and_junit(g: Gate, tmp_path: Path) -> None:
    md, xml = tmp_path / "gate.md", tmp_path / "gate.xml"
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    args = ["gate", "check", "main", "--root", str(g.root), "--source", str(g.src["slower"])]
    out = gpuopt(*args, "--markdown", str(md), "--junit", str(xml), "--json")
    assert out.code == 10, out.stderr
    env = json.loads(out.stdout)
    assert env["ok"] is True and env["data"]["outcome"] == "regression" and env["data"]["exit_code"] == 10
    text = md.read_text()
    assert text.startswith("## gpuopt gate: REGRESSION (exit 10)")
    assert env["data"]["target"]["id"] in text and env["data"]["baseline"]["sha256"] in text
    assert env["data"]["attempts"][0]["result"]["sha256"] in text
    _validate_junit(xml)
    import xml.etree.ElementTree as ET

    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite is not None and int(suite.get("failures", "0")) >= 1
    people = gpuopt(*args[:-2], "--source", str(g.src["no_effect"]), "--junit", str(xml))
    assert people.code == 0 and people.stdout.startswith("gate pass (exit 0)")
    _validate_junit(xml)
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "gpuopt", *args[:-2], "--source", str(g.src["no_effect"])],
        capture_output=True,
        text=True,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
        check=False,
    )
    assert done.returncode == 0
    assert summary.read_text().startswith("earlier step\n## gpuopt gate: PASS (exit 0)")


def _validate_junit(path: Path) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(str(XSD)).validate(str(path))


def test_export_import_gives_the_same_verdicts_in_another_root(g: Gate, tmp_path: Path) -> None:
    file = tmp_path / "main.gpuopt-gate"
    exported = bundle.export(g.root, "main", file)
    assert exported.objects == 1 and exported.blobs >= 1
    imported = bundle.import_(g.other, file, name=None, replace=False)
    assert imported.baseline == exported.baseline and imported.created is True
    again = bundle.import_(g.other, file, name=None, replace=False)
    assert again.created is False
    for source, outcome in (("no_effect", "pass"), ("slower", "regression")):
        here, there = g.check("main", source, seed=5), g.check("main", source, root=g.other, seed=5)
        assert (here.outcome, there.outcome) == (outcome, outcome)
        assert there.mode == "paired" and there.baseline == here.baseline


def test_a_changed_runtime_is_identity_mismatch(g: Gate) -> None:
    store = Store(g.root)
    record = gates.read_baseline(store, gates.read_name(store, "main").baseline)
    core = record.model_dump(mode="json")
    core["runtime"] = {**core["runtime"], "reported.frameworks.numpy": '"1.0.0"', "host.cpu_model": '"other"'}
    _, ref, _ = gates.publish(store, core)
    gates.set_name(store, "elsewhere", ref, replace=False)
    before = g.check("elsewhere", "no_effect")
    assert (before.outcome, before.exit_code, before.mode) == ("identity_mismatch", 11, "not_run")
    assert [d.name for d in before.identity_differences] == ["host.cpu_model"]
    assert before.attempts == []
    # the driver reports another runtime during the run (a library upgraded under the Target)
    workload.set_behavior(g.layout["behavior"], {"mode": "identity_change"})
    try:
        during = g.check("main", "no_effect", seed=11)
    finally:
        workload.set_behavior(g.layout["behavior"], {"mode": "ok"})
    assert (during.outcome, during.exit_code) == ("identity_mismatch", 11)
    assert during.result is not None and during.result.stop_reason == "identity_changed"


def test_unpaired_against_isolated_calls(g: Gate) -> None:
    baselines.save(g.root, "iso", sources_=[g.baseline.invocation_id], role=None, captures=[], replace=False)
    record = baselines.show(g.root, "iso").baseline
    assert record.samples is not None and record.samples.role == "original" and len(record.samples.calls) == 6
    passed = g.check("iso", "no_effect", mode="unpaired")
    assert passed.mode == "unpaired" and passed.result is not None and passed.result.unpaired is not None
    assert passed.result.unpaired.calls_current == {"a": 3, "b": 3}
    assert any(r.code == "blocks_too_few" for r in passed.reasons)
    assert passed.outcome in ("pass", "inconclusive")
    slower = g.check("iso", "slower", mode="unpaired")
    assert (slower.outcome, slower.exit_code) == ("regression", 10)
    with pytest.raises(InputError) as err:
        check(CheckRequest(root=g.root, against="champion", source=g.src["no_effect"], mode="unpaired"))
    assert err.value.code == "gate_unpaired_unsupported"


def test_typed_errors(g: Gate, tmp_path: Path) -> None:
    def code(fn: Any, *a: Any, **kw: Any) -> str:
        with pytest.raises(InputError) as err:
            fn(*a, **kw)
        return err.value.code

    assert code(g.check, "nope", "no_effect") == "gate_baseline_not_found"
    assert code(
        baselines.save, g.root, "bad name", sources_=["x"], role=None, captures=[], replace=False
    ) == ("gate_name_invalid")
    assert (
        code(
            baselines.save,
            g.root,
            "main",
            sources_=[g.baseline.invocation_id],
            role=None,
            captures=[],
            replace=False,
        )
        == "gate_name_exists"
    )
    assert code(check, CheckRequest(root=g.root, name="main")) == "field_missing"
    assert code(check, CheckRequest(root=g.root, name="main", source=g.src["no_effect"], keys="kernel")) == (
        "gate_captures_missing"
    )
    assert code(check, CheckRequest(root=g.base, name="main")) == "not_a_store"
    junk = tmp_path / "junk.gpuopt-gate"
    junk.write_bytes(b"not a tar at all")
    assert code(bundle.import_, g.other, junk, name=None, replace=False) == "gate_bundle_invalid"
    out = gpuopt(
        "gate", "check", "nope", "--root", str(g.root), "--source", str(g.src["no_effect"]), "--json"
    )
    assert out.code == 2 and json.loads(out.stdout)["errors"][0]["code"] == "gate_baseline_not_found"
    assert "Traceback" not in out.stderr


def test_a_bundle_of_another_target_is_refused(g: Gate, tmp_path: Path) -> None:
    base = tmp_path / "t2"
    layout = workload.layout(base / "w")
    request = workload.request(
        layout, base / "root", statistics={"seed": 8, "minimum_pairs": 2, "resamples": 1000}
    )
    readiness.check(json.dumps(request).encode())
    file = tmp_path / "main.gpuopt-gate"
    bundle.export(g.root, "main", file)
    with pytest.raises(InputError) as err:
        bundle.import_(base / "root", file, name=None, replace=False)
    assert err.value.code == "gate_target_mismatch"
    assert not (base / "root" / "gates").exists()


def test_contamination_is_never_judged_and_retried_within_the_budget(tmp_path: Path) -> None:
    layout = workload.layout(tmp_path / "w")
    src = tmp_path / "code"
    src.mkdir()
    (src / "impl.py").write_text(IMPLS["original"])
    always = {
        "id": "always",
        "signal": "host.mem_available_bytes",
        "op": "gt",
        "value": 0,
        "min_fraction": 0,
        "on_missing": "invalidate",
    }
    request = workload.request(
        layout,
        tmp_path / "root",
        statistics={"seed": 7, "minimum_pairs": 2, "resamples": 1000},
        contamination={"sampler": "nvml", "period_ms": 100, "rules": [always]},
    )
    readiness.check(json.dumps(request).encode())
    plan = {"case_ids": ["a"], "samples_per_call": 3, "warmup_per_call": 0, "calls_per_case": 2}
    out = operations.run(
        "baseline", {"root": str(tmp_path / "root"), "limits": FAST, "plan": plan}, wait=True
    )
    assert out.result is not None
    # every call of the baseline was contaminated: nothing to save
    with pytest.raises(InputError) as err:
        baselines.save(
            tmp_path / "root", "b", sources_=[out.result.invocation_id], role=None, captures=[], replace=False
        )
    assert err.value.code == "gate_source_invalid"
    # a baseline of the original's variant (its calls' values are not used by a paired check)
    store = Store(tmp_path / "root")
    target = baselines.open_root(store.root)[1]
    ref = {"invocation_id": out.result.invocation_id, "sha256": out.result_ref.sha256}
    plan_ = {**plan, "pairs": 2, "lifecycle": "isolated", "shared_state": [], "rebuilt_state": []}
    del plan_["calls_per_case"]
    core = {
        "format": "gpuopt.gate-baseline/v1",
        "target": store.target_ref().model_dump(),
        "samples": {
            "variant": {"kind": "source", "digest": target.original.digest},
            "role": "original",
            "plan": plan_,
            "sources": [ref],
            "calls": [
                {
                    "session": ref["invocation_id"],
                    "call_index": 0,
                    "case_id": "a",
                    "values": {"step_time_ms": 4.0},
                }
            ],
        },
        "captures": None,
        "runtime": baselines.target_facts(store, target, []),
    }
    _, record, _ = gates.publish(store, core)
    gates.set_name(store, "b", record, replace=False)
    data = check(CheckRequest(root=tmp_path / "root", name="b", source=src, retries=1))
    assert (data.outcome, data.exit_code) == ("invalid", 13)
    assert [a.stop_reason for a in data.attempts] == ["contaminated", "contaminated"]
    assert data.attempts[1].invocation_id == data.attempts[0].invocation_id + "-r1"
    assert all(a.contamination_checked and a.contamination_by_rule.get("always") for a in data.attempts)
    assert data.result is not None and not any(p.valid for p in data.result.pairs)
    assert all("always" in p.invalid_reasons for p in data.result.pairs)


# ---- hostile bundles (a trial found each accepted, read whole, or a traceback) ---------------------------


def _members_of(file: Path) -> dict[str, bytes]:
    import tarfile

    with tarfile.open(file) as tar:
        return {i.name: tar.extractfile(i).read() for i in tar.getmembers()}  # type: ignore[union-attr]


def _bundle_with(members: dict[str, bytes], out: Path) -> Path:
    """A bundle of ``members`` whose bundle.json lists them as they are (sha256 and size)."""
    import hashlib
    import io
    import tarfile

    index = json.loads(members["bundle.json"])
    index["members"] = [
        {"path": p, "sha256": hashlib.sha256(d).hexdigest(), "size_bytes": len(d)}
        for p, d in members.items()
        if p != "bundle.json"
    ]
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        rest = {p: d for p, d in members.items() if p != "bundle.json"}
        for path, data in {"bundle.json": json.dumps(index).encode(), **rest}.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_manifest_written_another_way_is_refused_and_nothing_written(g: Gate, tmp_path: Path) -> None:
    """The same JSON indented parses alike but is not the store's bytes: it was imported, and the root
    then failed `store verify` (manifest_corrupt) and could not export it again."""
    file = tmp_path / "main.gpuopt-gate"
    bundle.export(g.root, "main", file)
    members = _members_of(file)
    trees = [p for p in members if p.startswith("objects/trees/")]
    assert trees
    for path in trees:
        members[path] = json.dumps(json.loads(members[path]), indent=2).encode()
    hostile = _bundle_with(members, tmp_path / "indented.gpuopt-gate")
    root = tmp_path / "r"
    shutil.copytree(g.other, root, symlinks=True)
    before = _files(root)
    with pytest.raises(InputError) as err:
        bundle.import_(root, hostile, name=None, replace=False)
    assert err.value.code == "gate_bundle_invalid" and "hash to its name" in err.value.message
    assert _files(root) == before


def test_an_unlisted_member_is_refused_before_its_bytes_are_read(
    g: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member bundle.json does not list (3 GiB in the trial: read whole, 3.1 GB of memory, then
    refused) is refused from its header."""
    import tarfile

    file = tmp_path / "main.gpuopt-gate"
    bundle.export(g.root, "main", file)
    with tarfile.open(file, "a") as tar:
        info = tarfile.TarInfo("objects/blobs/00/unlisted")
        info.size = 1 << 20
        tar.addfile(info, __import__("io").BytesIO(b"\0" * (1 << 20)))
    read: list[str] = []
    extract = tarfile.TarFile.extractfile

    def spy(self: tarfile.TarFile, member: Any) -> Any:
        read.append(member.name)
        return extract(self, member)

    monkeypatch.setattr(tarfile.TarFile, "extractfile", spy)
    with pytest.raises(InputError) as err:
        bundle.import_(g.other, file, name=None, replace=False)
    assert err.value.code == "gate_bundle_invalid"
    assert "objects/blobs/00/unlisted" not in read


@pytest.mark.parametrize(
    "pax",
    [
        {"GNU.sparse.map": "a,b", "GNU.sparse.size": "10"},
        {
            "GNU.sparse.major": "1",
            "GNU.sparse.minor": "0",
            "GNU.sparse.name": "zz",
            "GNU.sparse.realsize": "zz",
        },
        {"size": "99999999999999999999999"},
    ],
)
def test_malformed_pax_headers_are_a_bad_bundle_not_a_traceback(
    g: Gate, tmp_path: Path, pax: dict[str, str]
) -> None:
    import io
    import tarfile

    file = tmp_path / "pax.gpuopt-gate"
    with tarfile.open(file, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, headers in [("bundle.json", {}), ("objects/blobs/ab/x", pax)]:
            info = tarfile.TarInfo(name)
            info.size = 1
            info.pax_headers = headers
            tar.addfile(info, io.BytesIO(b"x"))
    run = gpuopt("gate", "import", str(file), "--root", str(g.other), "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert json.loads(run.stdout)["errors"][0]["code"] == "gate_bundle_invalid"


def test_a_name_with_a_trailing_newline_is_invalid(g: Gate, tmp_path: Path) -> None:
    """`^...$` matched before a final newline: the name passed, then pydantic failed (exit 1), after the
    import had written its record."""
    run = gpuopt("gate", "save", "bad\n", "--root", str(g.root), "--from", g.noise.invocation_id, "--json")
    assert run.code == 2 and json.loads(run.stdout)["errors"][0]["code"] == "gate_name_invalid"
    file = tmp_path / "main.gpuopt-gate"
    bundle.export(g.root, "main", file)
    members = _members_of(file)
    index = json.loads(members["bundle.json"])
    index["name"] = "main\n"
    members["bundle.json"] = json.dumps(index).encode()
    hostile = _bundle_with(members, tmp_path / "nl.gpuopt-gate")
    root = tmp_path / "r"
    shutil.copytree(g.other, root, symlinks=True)
    before = _files(root)
    run = gpuopt("gate", "import", str(hostile), "--root", str(root), "--json")
    assert run.code == 2, run.stdout + run.stderr
    assert json.loads(run.stdout)["errors"][0]["code"] == "gate_name_invalid"
    assert {k: v for k, v in _files(root).items() if not k.startswith("locks/")} == {
        k: v for k, v in before.items() if not k.startswith("locks/")
    }


def test_a_champion_check_takes_no_name_and_outputs_are_checked_first(g: Gate, tmp_path: Path) -> None:
    """`--against champion main` ignored `main` (exit 10 against the Champion); a FIFO as
    $GITHUB_STEP_SUMMARY blocked the check until killed, after the whole measurement."""
    import os

    run = gpuopt(
        "gate", "check", "main", "--against", "champion", "--root", str(g.root),
        "--source", str(g.src["no_effect"]), "--json",
    )  # fmt: skip
    assert run.code == 2 and json.loads(run.stdout)["errors"][0]["code"] == "field_invalid"
    os.mkfifo(tmp_path / "summary")
    request = CheckRequest(
        root=g.root, name="main", source=g.src["no_effect"], step_summary=tmp_path / "summary"
    )
    measured = sorted((g.root / "invocations").iterdir())
    with pytest.raises(InputError) as err:
        check(request)
    assert err.value.code == "output_not_a_file"
    assert sorted((g.root / "invocations").iterdir()) == measured, "refused before measuring"


def test_a_name_never_points_at_a_record_removed_before_it_was_set(g: Gate, tmp_path: Path) -> None:
    """The race a trial read in the code: `gate import` publishes the record, then sets the name; a
    `gate delete` in between (of another name for the same record) removed the record, and the new name
    pointed at nothing. Played in order here: the record removed between the two steps."""
    root = tmp_path / "r"
    shutil.copytree(g.root, root, symlinks=True)
    store = Store(root)
    ref = gates.read_name(store, "main").baseline
    (root / gates.record_rel(ref.id)).chmod(0o644)
    (root / gates.record_rel(ref.id)).unlink()
    with pytest.raises(InputError) as err:
        gates.set_name(store, "again", ref, replace=False)
    assert err.value.code == "gate_baseline_not_found"
    assert "again" not in gates.names(store)
