"""``gpuopt capture`` wired end to end on the CPU example (`gpuopt example`'s numpy project, real
driver processes, real supervisors), with profiler stand-ins: a small script named nsys (or ncu) that runs the
driver it wraps and replays a real recorded H200 capture (``tests/data/fixtures/gpuopt/h200/softmax``: the GPU
example's softmax, original and faster candidate, five interleaved captures each) as its report. The captures
then feed ``gpuopt profile diff`` as ``cap:`` references, whose numbers must equal the diff of the recorded
files themselves (paired, since the capture interleaved them).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from gpuopt import profile
from gpuopt.errors import GpuoptError
from gpuopt.evaluation import invocation
from gpuopt.evaluation.capture import operations, refs
from gpuopt.evaluation.records import read_result
from gpuopt.evaluation.store import Store
from gpuopt.example.runner import Runner

LIMITS = {"operation_timeout_s": 600, "command_timeout_s": 120, "termination_grace_s": 0.3}
PLAN = {"case_ids": ["rows512"], "samples_per_call": 2, "warmup_per_call": 0}
# The recorded capture each role replays, numbered by the role's n-th call (1..5).
REPLAY = {"original": "original_a", "reference": "original_b", "candidate": "faster"}

FAKE_NSYS = """#!{python}
# A stand-in for nsys: `profile` runs the wrapped driver, then writes the next recorded H200 capture of the
# driver's subject role as its report; `export` copies that report (a SQLite file already) to the output.
import json, os, shutil, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA Nsight Systems version 2025.3.1.90-253135822126v0")
    sys.exit(0)
opt = {{a.split("=", 1)[0]: a.split("=", 1)[1] for a in args if a.startswith("--") and "=" in a}}
if args[0] == "export":
    shutil.copyfile(args[-1], opt["--output"])
    sys.exit(0)
mode = {mode!r}
command = args[args.index("--") + 1:]
if mode == "hang":
    import time
    open(os.path.join({state!r}, "started"), "w").close()
    time.sleep(120)
code = subprocess.call(command)
if mode == "no_report":
    print("nsys: the application exited before the capture range started", file=sys.stderr)
    sys.exit(code)
request = json.load(open(command[command.index("--request") + 1]))
role = request["subjects"][0]["role"]
counter = os.path.join({state!r}, role)
n = (int(open(counter).read()) if os.path.exists(counter) else 0) + 1
open(counter, "w").write(str(n))
name = {replay!r}[role]
shutil.copyfile(os.path.join({folder!r}, "sm_%s_%d.sqlite" % (name, n)), opt["--output"] + ".nsys-rep")
sys.exit(code)
"""

FAKE_NCU = """#!{python}
# A stand-in for ncu: prints ncu's real counter-permission error, as ncu does on a locked-down host, or
# runs the command and writes a real recorded H200 report where --export points.
import shutil, subprocess, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
print("==PROF== Connected to process 4242")
if {report!r}:
    at = args.index("--export")
    code = subprocess.call(args[at + 2:])
    shutil.copyfile({report!r}, args[at + 1] + ".ncu-rep")
    sys.exit(code)
print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance"
      " Counters on the target device 0.")
sys.exit(1)
"""


def _stand_in(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


class Example:
    """The CPU example's Target, baseline and Experiments (no evaluation beyond the baseline)."""

    def __init__(self, base: Path, shared: Path) -> None:
        self.base = base
        self.shared = shared
        runner = Runner(base / "demo", gpu=False, progress=lambda _: None)
        runner.prepare()
        runner.readiness()
        runner.baseline()
        runner.experiments()
        self.dir = runner.dir
        self.root = runner.dir / "root"
        self.refs = runner.refs

    def nsys(self, tag: str, mode: str = "replay") -> Path:
        state = self.base / f"state-{tag}"
        state.mkdir()
        folder = self.shared / "gpuopt/h200/softmax/nsys"
        text = FAKE_NSYS.format(
            python=sys.executable, mode=mode, state=str(state), replay=REPLAY, folder=str(folder)
        )
        return _stand_in(self.base / f"bin-{tag}", "nsys", text)

    def request(self, tool: str, variants: list[str], **over: Any) -> dict[str, Any]:
        req: dict[str, Any] = {
            "root": str(self.root),
            "tool": tool,
            "plan": {**PLAN, "variants": variants, "repeats": 5},
            "limits": LIMITS,
        }
        if "candidate" in variants:
            req["experiment"] = self.refs["experiment:faster"]
        req.update(over)
        return req


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> Example:
    return Example(tmp_path_factory.mktemp("capture"), shared)


@pytest.fixture(scope="module")
def nsys_ab(example: Example) -> Any:
    fake = example.nsys("ab")
    req = example.request("nsys", ["original", "candidate"], profiler=str(fake))
    return operations.run(req, cwd=example.dir, wait=True)


def test_nsys_capture_interleaves_and_freezes_every_report(example: Example, nsys_ab: Any) -> None:
    result = nsys_ab.result
    assert result is not None, nsys_ab.summary
    assert (result.verdict, result.execution_status, result.measurement_validity) == (
        "passed",
        "succeeded",
        "valid",
    )
    caps = result.captures
    assert [(c.variant, c.repeat) for c in caps] == [
        (v, r)
        for r in range(5)
        for v in (["original", "candidate"] if r % 2 == 0 else ["candidate", "original"])
    ]
    assert all(c.status == "captured" for c in caps)
    # Same inputs within a repeat: the driver got one seed per repeat and case.
    store = Store.open(example.root)
    seeds = {}
    for c in caps:
        req = json.loads(
            (
                example.root
                / "invocations"
                / result.invocation_id
                / "calls"
                / f"{c.call_index:04d}"
                / "request.json"
            ).read_text()
        )
        seeds.setdefault(c.repeat, set()).add(req["sampling"]["input_seed"])
    assert all(len(s) == 1 for s in seeds.values()) and len({min(s) for s in seeds.values()}) == 5
    # Each report and its export are frozen, content-addressed, and the blob is the recorded file.
    first = caps[0]
    assert [a.kind for a in first.artifacts] == ["nsys-rep", "nsys-sqlite"]
    blob = store.path(f"objects/blobs/{first.artifacts[1].sha256[:2]}/{first.artifacts[1].sha256}")
    recorded = example.shared / "gpuopt/h200/softmax/nsys/sm_original_a_1.sqlite"
    assert blob.read_bytes() == recorded.read_bytes()
    # The engine's facts beside it equal what the diff engine reads from the recorded file.
    truth = profile.diff_files([recorded], [recorded]).baseline[0]
    assert first.facts is not None
    assert (first.facts.keys, first.facts.events, first.facts.total_ns) == (
        truth.keys,
        truth.events,
        truth.total_ns,
    )
    settings = result.capture
    assert settings.tool == "nsys" and settings.profiler is not None
    assert settings.profiler.version == "2025.3.1.90"
    assert settings.options["cuda-graph-trace"] == "graph" and settings.options["trace"] == "cuda,nvtx,osrt"
    assert settings.argv[:2] == [settings.profiler.path, "profile"]
    # gpuopt report lists the captures with their facts.
    from gpuopt.evaluation.views import report

    md = report.report(example.root, result.invocation_id).text or ""
    assert f"`cap:{result.invocation_id}/VARIANT` in gpuopt profile diff" in md
    assert "| 0 | original | rows512 | 0 | captured | — | nsys-rep " in md
    assert f"| {truth.events} | {truth.total_ns} |" in md


def test_capture_refs_diff_equals_the_recorded_files_diff(example: Example, nsys_ab: Any) -> None:
    inv = nsys_ab.result.invocation_id
    folder = example.shared / "gpuopt/h200/softmax/nsys"
    original = [folder / f"sm_original_a_{i}.sqlite" for i in range(1, 6)]
    faster = [folder / f"sm_faster_{i}.sqlite" for i in range(1, 6)]
    truth = profile.diff_files(original, faster, by="kernel", paired=True)
    run = gpuopt(
        "profile", "diff", "--root", str(example.root),
        "--baseline", f"cap:{inv}/original", "--candidate", f"cap:{inv}/candidate", "--json",
    )  # fmt: skip
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    assert data["method"]["pairing"] == "paired"
    assert data["counts"]["flagged"] == truth.counts.flagged >= 1
    assert [b["path"] for b in data["baseline"]] == [f"cap:{inv}/original/rows512#{r}" for r in range(5)]
    rows = {r["key"]: r for r in data["table"]["rows"]}
    for row in truth.table.iter_rows(named=True):
        assert rows[row["key"]]["change_ns"] == pytest.approx(row["change_ns"])
        assert rows[row["key"]]["ci_low_ns"] == pytest.approx(row["ci_low_ns"])
    # A capture reference beside a plain file (one capture on that side): unpaired, no uncertainty.
    one = gpuopt(
        "profile", "diff", "--root", str(example.root),
        "--baseline", f"cap:{inv}/original", "--candidate", str(faster[0]), "--json",
    )  # fmt: skip
    assert one.code == 0
    assert one.json()["data"]["method"]["pairing"] == "none"
    assert "no_uncertainty" in [w["code"] for w in one.json()["data"]["warnings"]]


def test_aa_capture_of_original_and_champion(example: Example) -> None:
    fake = example.nsys("aa")
    out = operations.run(
        example.request("nsys", ["original", "champion"], profiler=str(fake)), cwd=example.dir, wait=True
    )
    result = out.result
    assert result is not None and result.verdict == "passed", out.summary
    variants = {v.variant: v for v in result.capture.variants}
    assert variants["original"].digest == variants["champion"].digest  # the Champion is the original
    a = refs.resolve(f"cap:{result.invocation_id}/original", example.root)
    b = refs.resolve(f"cap:{result.invocation_id}/champion", example.root)
    assert refs.paired(a, b)
    diff = profile.diff_files([x.path for x in a], [x.path for x in b], paired=True)
    assert diff.counts.flagged <= max(1, round(diff.method.fdr * diff.counts.tested))


def test_dry_run_writes_nothing_and_shows_the_plan(example: Example, tmp_path: Path) -> None:
    fake = example.nsys("dry")
    before = sorted(p.name for p in (example.root / "invocations").iterdir())
    out = operations.run(
        example.request(
            "nsys", ["original", "candidate"], profiler=str(fake), nsys={"capture_range": "cudaProfilerApi"}
        ),
        cwd=example.dir,
        dry_run=True,
    )
    assert out.dry_run is not None and out.dry_run.calls.total == 10
    assert out.dry_run.calls.by_role == {"original": 5, "candidate": 5}
    argv = out.dry_run.request["capture"]["argv"]
    assert "--capture-range=cudaProfilerApi" in argv and "--capture-range-end=stop" in argv
    assert sorted(p.name for p in (example.root / "invocations").iterdir()) == before
    assert out.summary[2:5] == [
        "  call 0: rows512 repeat 0 original",
        "  call 1: rows512 repeat 0 candidate",
        "  call 2: rows512 repeat 1 candidate",
    ]


def _code(fn: Any, *args: Any, **kw: Any) -> tuple[str, int]:
    try:
        fn(*args, **kw)
    except GpuoptError as exc:
        return exc.code, exc.exit_code
    return "ok", 0


def test_request_time_refusals(example: Example, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = operations.run
    d = example.dir
    # A driver without the torch_trace capability cannot capture with torch.
    assert _code(run, example.request("torch", ["original"]), cwd=d, dry_run=True) == (
        "driver_capability_missing",
        2,
    )
    # A missing profiler: exit 3 naming what to install.
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GPUOPT_NSYS", raising=False)
    monkeypatch.setattr("gpuopt.tools._standard_dirs", lambda name: iter(()))
    assert _code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("tool_absent", 3)
    monkeypatch.setenv("GPUOPT_NSYS", str(tmp_path / "nope"))
    assert _code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("tool_absent", 3)
    monkeypatch.setenv("PATH", path)  # the Target froze PATH: a changed PATH is environment_changed
    monkeypatch.setenv("GPUOPT_NSYS", str(example.nsys("env")))
    assert _code(run, example.request("nsys", ["original"]), cwd=d, dry_run=True) == ("ok", 0)
    # The candidate needs its Experiment; a variant listed twice; nvtx range without a name.
    req = example.request("nsys", ["candidate"])
    del req["experiment"]
    assert _code(run, req, cwd=d, dry_run=True)[0] == "field_invalid"
    assert (
        _code(run, example.request("nsys", ["original", "original"]), cwd=d, dry_run=True)[0]
        == "field_invalid"
    )
    bad = example.request("nsys", ["original"], nsys={"capture_range": "nvtx"})
    assert _code(run, bad, cwd=d, dry_run=True)[0] == "field_invalid"


def test_profiler_without_report_is_a_typed_failure(example: Example) -> None:
    fake = example.nsys("noreport", mode="no_report")
    out = operations.run(
        example.request(
            "nsys", ["original"], profiler=str(fake), plan={**PLAN, "variants": ["original"], "repeats": 1}
        ),
        cwd=example.dir,
        wait=True,
    )
    result = out.result
    assert result is not None
    assert result.verdict == "not_evaluated" and result.stop_reason == "profiler_no_report"
    assert [(c.status, c.reason) for c in result.captures] == [("failed", "profiler_no_report")]
    code = _code(refs.resolve, f"cap:{result.invocation_id}/original", example.root)
    assert code == ("capture_voided", 2)


def test_ncu_counter_permission_is_typed_with_the_version_kept(example: Example) -> None:
    fake = _stand_in(example.base / "bin-ncu", "ncu", FAKE_NCU.format(python=sys.executable, report=""))
    req = example.request(
        "ncu", ["original"], profiler=str(fake), plan={**PLAN, "variants": ["original"], "repeats": 1}
    )
    out = operations.run(req, cwd=example.dir, wait=True)
    result = out.result
    assert result is not None
    assert result.stop_reason == "ncu_counter_access_denied"
    assert result.captures[0].reason == "ncu_counter_access_denied"
    assert "NVreg_RestrictProfilingToAdminUsers" in (result.captures[0].message or "")
    assert result.capture.profiler is not None and result.capture.profiler.version == "2025.3.1.0"
    assert "--clock-control" in result.capture.argv and result.capture.options["clock-control"] == "none"


def test_capture_cli_and_status(example: Example, nsys_ab: Any, tmp_path: Path) -> None:
    inv = nsys_ab.result.invocation_id
    request = tmp_path / "req.json"
    fake = example.base / "bin-ab" / "nsys"  # the same profiler: same identity, same request digest
    request.write_text(json.dumps(example.request("nsys", ["original", "candidate"], profiler=str(fake))))
    again = gpuopt("capture", "--request", str(request), "--json", cwd=example.dir)
    assert again.code == 0, again.stderr
    # The same request dedupes to the finished capture (its result reused).
    assert again.json()["data"]["submission"]["invocation_id"] == inv
    assert again.json()["data"]["submission"]["deduplicated"] is True
    st = invocation.status(example.root, inv)
    assert st.state == "completed" and st.operation == "capture"
    absent = gpuopt(
        "profile",
        "diff",
        "--root",
        str(example.root),
        "--baseline",
        "cap:inv-" + "0" * 32 + "/original",
        "--candidate",
        "x.sqlite",
    )
    assert absent.code == 2 and "capture_not_found" in absent.stderr
    amb = gpuopt(
        "profile", "diff", "--root", str(example.root), "--baseline", f"cap:{inv}", "--candidate", "x.sqlite"
    )
    assert amb.code == 2 and "capture_ref_ambiguous" in amb.stderr


TRACING_DRIVER = """import gzip, os, runpy, shutil, sys
# A stand-in for a driver with the torch_trace capability on a machine without torch: it runs the CPU
# example's driver, then writes the next recorded H200 Kineto trace of its subject's role where gpuopt asked.
sys.argv = [os.path.join(os.path.dirname(__file__), "driver.py"), *sys.argv[1:]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit as exc:
    if exc.code:
        raise
out = os.environ.get("GPUOPT_TORCH_TRACE")
if out and not os.path.exists({forget!r}):
    import json
    request = json.load(open(sys.argv[sys.argv.index("--request") + 1]))
    role = request["subjects"][0]["role"]
    counter = os.path.join({state!r}, role)
    n = (int(open(counter).read()) if os.path.exists(counter) else 0) + 1
    open(counter, "w").write(str(n))
    name = {replay!r}[role]
    with gzip.open(os.path.join({folder!r}, "sm_%s_%d.json.gz" % (name, n))) as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g)
"""


@pytest.fixture(scope="module")
def tracing(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> tuple[Path, Path, Path]:
    """A CPU example Target whose driver declares torch_trace (the stand-in above); returns its folder,
    root and the file whose presence makes the driver forget the trace."""
    from gpuopt.evaluation import readiness
    from gpuopt.example.runner import readiness_request

    base = tmp_path_factory.mktemp("torch-capture")
    runner = Runner(base / "demo", gpu=False, progress=lambda _: None)
    runner.prepare()
    state, forget = base / "state", base / "forget"
    state.mkdir()
    folder = shared / "gpuopt/h200/softmax/torch"
    text = TRACING_DRIVER.format(forget=str(forget), state=str(state), replay=REPLAY, folder=str(folder))
    (runner.dir / "project/bench/tracing.py").write_text(text)
    request = readiness_request("numpy")
    request["driver"]["argv"] = [sys.executable, "project/bench/tracing.py"]
    request["driver"]["capabilities"] = ["torch_trace"]
    readiness.check(json.dumps(request).encode(), cwd=runner.dir)
    return runner.dir, runner.dir / "root", forget


def test_torch_capture_through_the_driver_capability(tracing: tuple[Path, Path, Path], shared: Path) -> None:
    directory, root, forget = tracing
    req = {
        "root": str(root),
        "tool": "torch",
        "plan": {**PLAN, "variants": ["original", "champion"], "repeats": 2},
        "limits": LIMITS,
    }
    out = operations.run(req, cwd=directory, wait=True)
    result = out.result
    assert result is not None and result.verdict == "passed", out.summary
    assert result.capture.profiler is None and result.capture.argv == []
    caps = result.captures
    assert [(c.variant, c.status) for c in caps] == [
        ("original", "captured"),
        ("champion", "captured"),
        ("champion", "captured"),
        ("original", "captured"),
    ]
    assert all([a.kind for a in c.artifacts] == ["kineto-trace"] for c in caps)
    a = refs.resolve(f"cap:{result.invocation_id}/original", root)
    b = refs.resolve(f"cap:{result.invocation_id}/champion", root)
    folder = shared / "gpuopt/h200/softmax/torch"
    truth = profile.diff_files(
        [folder / f"sm_original_a_{i}.json.gz" for i in (1, 2)],
        [folder / f"sm_original_b_{i}.json.gz" for i in (1, 2)],
        paired=True,
    )
    got = profile.diff_files([x.path for x in a], [x.path for x in b], paired=refs.paired(a, b))
    assert got.method.pairing == "paired"
    assert got.table["change_ns"].to_list() == truth.table["change_ns"].to_list()
    # A driver that declares the capability but writes no trace: a typed failure, nothing frozen.
    forget.write_text("")
    req["plan"] = {**PLAN, "variants": ["original"], "repeats": 1}
    failed = operations.run(req, cwd=directory, wait=True).result
    assert failed is not None and failed.stop_reason == "torch_trace_missing"
    assert [(c.status, c.reason, c.artifacts) for c in failed.captures] == [
        ("failed", "torch_trace_missing", [])
    ]


def test_a_target_result_cites_a_capture_diff_and_report_and_handoff_show_it(
    example: Example, nsys_ab: Any
) -> None:
    from gpuopt.evaluation import operations as evaluations
    from gpuopt.evaluation.views import handoff, report

    plan = {"samples_per_call": 3, "warmup_per_call": 0}
    base = {"root": str(example.root), "experiment": example.refs["experiment:faster"], "limits": LIMITS}
    screen = evaluations.run("screen", {**base, "plan": {**plan, "pairs": 2}}, cwd=example.dir, wait=True)
    assert screen.result is not None and screen.result.verdict == "not_rejected", screen.summary
    target = evaluations.run("target", {**base, "plan": {**plan, "pairs": 5}}, cwd=example.dir, wait=True)
    assert target.result is not None, target.summary
    tid = target.result.invocation_id
    inv = nsys_ab.result.invocation_id
    sides = ["--baseline", f"cap:{inv}/original", "--candidate", f"cap:{inv}/candidate"]
    run = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", tid, "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    cid = data["citation"]
    assert cid.startswith("cit-")
    rows = sorted(
        (r for r in data["table"]["rows"] if r["flagged"]), key=lambda r: (-abs(r["change_ns"]), r["key"])
    )
    # The record: the diff's facts, bound to the result's bytes.
    from gpuopt.evaluation.capture import citations

    [(cited, _)] = citations.for_result(Store.open(example.root), tid)
    assert (
        cited.id == cid
        and cited.result.invocation_id == tid
        and cited.result.sha256 == target.result_ref.sha256
    )
    assert (cited.k_baseline, cited.k_candidate, cited.pairing) == (5, 5, "paired")
    assert cited.flagged == data["counts"]["flagged"] and cited.keys[0].key == rows[0]["key"]
    assert cited.keys[0].ci_low_pct == pytest.approx(rows[0]["ci_low_pct"])
    text = citations.line(cited)
    assert text.startswith(f"nsys kernel diff over 5 captures per side (paired): {cited.flagged} of ")
    assert f"{rows[0]['change_pct']:+.1f} %" in text
    # Citing it again is the same record (content-derived id, published once).
    again = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", tid, "--json")
    assert again.code == 0 and again.json()["data"]["citation"] == cid
    # Report (markdown and JSON) and handoff show it beside the verdict.
    md = report.report(example.root, tid).text or ""
    assert "### Capture diffs cited by this result" in md and text in md
    js = report.report(example.root, tid, fmt="json").report or {}
    assert [c["id"] for c in js["capture_diffs"]] == [cid]
    notes = (Path(handoff.write(example.root).path)).read_text()
    verdict_line = next(i for i, line in enumerate(notes.splitlines()) if tid in line and "target" in line)
    assert "capture diff: " + text in notes.splitlines()[verdict_line + 1]
    # Only target / final-audit results cite; only capture records are cited.
    bad = gpuopt("profile", "diff", "--root", str(example.root), *sides, "--cite", inv)
    assert bad.code == 2 and "citation_result_invalid" in bad.stderr
    folder = example.shared / "gpuopt/h200/softmax/nsys"
    plain = gpuopt(
        "profile", "diff", "--root", str(example.root), "--baseline", str(folder / "sm_original_a_1.sqlite"),
        "--candidate", f"cap:{inv}/candidate", "--cite", tid,
    )  # fmt: skip
    assert plain.code == 2 and "citation_inputs_invalid" in plain.stderr


def test_ncu_capture_freezes_the_report(example: Example) -> None:
    recorded = example.shared / "h200/ncu/kernels_full.ncu-rep"
    text = FAKE_NCU.format(python=sys.executable, report=str(recorded))
    fake = _stand_in(example.base / "bin-ncu-ok", "ncu", text)
    plan = {**PLAN, "variants": ["original"], "repeats": 1}
    req = example.request("ncu", ["original"], profiler=str(fake), plan=plan, ncu={"kernel": "softmax"})
    result = operations.run(req, cwd=example.dir, wait=True).result
    assert result is not None and result.verdict == "passed"
    assert "--kernel-name" in result.capture.argv and "regex:softmax" in result.capture.argv
    [cap] = result.captures
    assert cap.status == "captured" and [a.kind for a in cap.artifacts] == ["ncu-rep"]
    blob = Store.open(example.root).path(
        f"objects/blobs/{cap.artifacts[0].sha256[:2]}/{cap.artifacts[0].sha256}"
    )
    assert blob.read_bytes() == recorded.read_bytes()
    # Reading a .ncu-rep needs NVIDIA's ncu-report package or ncu itself: without one the report is kept
    # and the record says why it has no facts.
    if cap.facts is None:
        assert (cap.message or "").startswith("facts not read: ")


def test_cancel_stops_a_capture_and_cleans_up(example: Example) -> None:
    fake = example.nsys("hang", mode="hang")
    plan = {**PLAN, "variants": ["original"], "repeats": 2}
    sub = operations.run(
        example.request("nsys", ["original"], profiler=str(fake), plan=plan), cwd=example.dir
    )
    assert sub.submission is not None
    inv = sub.submission.invocation_id
    started = example.base / "state-hang" / "started"
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists()
    invocation.cancel(example.root, inv)
    st = invocation.wait(example.root, inv, timeout_s=120)
    assert (st.state, st.cleanup_status) == ("completed", "confirmed")
    found = read_result(Store.open(example.root), inv)
    assert found is not None
    result = found[0]
    assert (result.execution_status, result.stop_reason) == ("cancelled", "cancelled")
    assert [(c.status, c.reason, c.call_index) for c in result.captures] == [("failed", "cancelled", 0)]
    assert result.calls.skipped == [1]


def test_a_failed_correctness_check_voids_that_capture(example: Example) -> None:
    fake = example.nsys("wrong")
    plan = {**PLAN, "variants": ["original", "candidate"], "repeats": 2}
    req = example.request("nsys", ["original", "candidate"], profiler=str(fake), plan=plan)
    req["experiment"] = example.refs["experiment:wrong"]
    result = operations.run(req, cwd=example.dir, wait=True).result
    assert result is not None
    assert (result.verdict, result.stop_reason) == ("failed", "correctness_failed")
    # The original's capture stands; the wrong candidate's is voided (nothing frozen) and the plan stops.
    assert [(c.variant, c.status, c.reason, len(c.artifacts)) for c in result.captures] == [
        ("original", "captured", None, 2),
        ("candidate", "voided", "correctness_failed", 0),
    ]
    assert result.calls.skipped == [2, 3]
    assert _code(refs.resolve, f"cap:{result.invocation_id}/candidate", example.root) == ("capture_voided", 2)
    assert len(refs.resolve(f"cap:{result.invocation_id}/original", example.root)) == 1
