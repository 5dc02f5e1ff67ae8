"""Supervised invocations with real processes: drivers that escape, hang, flood, miscount, fail correctness
or change identity each end with their typed outcome and no leftover process; dedupe and retry; status,
lost supervisors and cancel; launch deadlines. Per-GPU locks and orphan recovery:
``test_eval_gpu_locks.py``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from eval_support import procs, workload
from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, invocation_status, jsonio, readiness
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.invocation import InvocationResult, Limits
from gpuopt.models.evaluation.status import ActiveChild

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

FAST = Limits(command_timeout_s=20, termination_grace_s=0.3, cleanup_timeout_s=10)


@pytest.fixture(scope="module")
def ready(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    base = tmp_path_factory.mktemp("runtime")
    layout = workload.layout(base / "w")
    readiness.check(json.dumps(workload.request(layout, base / "root")).encode())
    os.environ["GPUOPT_LOCK_DIR"] = str(base / "locks")
    yield {**layout, "root": base / "root"}
    os.environ.pop("GPUOPT_LOCK_DIR", None)


_samples = iter(range(3, 10_000))

SCENARIOS: dict[str, tuple[dict[str, Any], Limits, list[str]]] = {
    "ok": ({"mode": "ok"}, FAST, ["a", "b"]),
    "fork_escape": (
        {"mode": "fork_escape"},
        Limits(command_timeout_s=1.5, termination_grace_s=0.3, cleanup_timeout_s=10),
        ["a"],
    ),
    "hang": (
        {"mode": "hang"},
        Limits(command_timeout_s=1.0, termination_grace_s=2, cleanup_timeout_s=10),
        ["a"],
    ),
    "flood": ({"mode": "flood", "flood_bytes": 1 << 30}, FAST, ["a"]),
    "wrong_count": ({"mode": "wrong_count"}, FAST, ["a", "b"]),
    "fail_correctness": ({"mode": "fail_correctness"}, FAST, ["a", "b"]),
    "undeclared_member": ({"mode": "undeclared_member"}, FAST, ["a"]),
    "exit_code": ({"mode": "exit_code"}, FAST, ["a"]),
    "leave_process": ({"mode": "leave_process"}, FAST, ["a"]),
    "identity_change": ({"mode": "identity_change", "only_calls": [1]}, FAST, ["a", "b", "a"]),
}


@pytest.fixture(scope="module")
def results(ready: dict[str, Path]) -> dict[str, InvocationResult]:
    """Every misbehaving-driver scenario, submitted at once (told apart by sample count) and awaited."""
    counts = {name: next(_samples) for name in SCENARIOS}
    workload.set_behavior(
        ready["behavior"],
        {
            "by_samples": {
                str(counts[name]): {**b, "only_invocations": "inv-"} for name, (b, _, _) in SCENARIOS.items()
            }
        },
    )
    submitted = {
        name: invocation.submit_smoke(
            ready["root"], case_ids=cases, samples_per_call=counts[name], limits=limits
        )
        for name, (_, limits, cases) in SCENARIOS.items()
    }
    out = {}
    store = Store(ready["root"])
    for name, sub in submitted.items():
        st = invocation.wait(ready["root"], sub.invocation_id, timeout_s=180)
        assert st.state == "completed", (name, st)
        out[name], _ = store.read_record(
            f"invocations/{sub.invocation_id}/result.json", InvocationResult, what="result"
        )
    assert procs.wait_gone(str(ready["behavior"])) == []
    return out


def _run(
    ready: dict[str, Path], behavior: dict[str, Any], *, limits: Limits = FAST, cases: list[str] | None = None
) -> InvocationResult:
    """Submits a fresh smoke invocation (a unique sample count avoids dedupe) and waits for its result."""
    workload.set_behavior(ready["behavior"], {**behavior, "only_invocations": "inv-"})
    out = invocation.submit_smoke(
        ready["root"], case_ids=cases or ["a"], samples_per_call=next(_samples), limits=limits
    )
    st = invocation.wait(ready["root"], out.invocation_id, timeout_s=120)
    assert st.state == "completed", st
    result, _ = Store(ready["root"]).read_record(
        f"invocations/{out.invocation_id}/result.json", InvocationResult, what="result"
    )
    assert procs.wait_gone(str(ready["behavior"])) == []
    return result


def _outcome(r: InvocationResult) -> tuple[str, str, str, str]:
    return (r.execution_status, r.measurement_validity, r.verdict, r.stop_reason)


def test_valid_invocation_records_receipts_samples_and_events(
    ready: dict[str, Path], results: dict[str, InvocationResult]
) -> None:
    r = results["ok"]
    assert _outcome(r) == ("succeeded", "valid", "passed", "completed")
    assert (r.calls.planned, r.calls.completed, r.calls.skipped, r.cleanup_status) == (2, 2, [], "confirmed")
    inv = ready["root"] / "invocations" / r.invocation_id
    import polars as pl

    samples = pl.read_parquet(inv / "samples.parquet")
    assert samples.columns == [
        "call",
        "pair",
        "case",
        "order",
        "role",
        "digest",
        "metric",
        "index",
        "value",
        "unit",
    ]
    per_call = json.loads((inv / "request.json").read_bytes())["plan"]["samples_per_call"]
    assert r.tables.samples is not None and r.tables.samples.rows == samples.height == 2 * per_call
    assert samples["case"].unique().sort().to_list() == ["a", "b"]
    events = [json.loads(line) for line in (inv / "events.jsonl").read_text().splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    names = [e["event"] for e in events]
    assert names[0] == "supervisor_started" and names[-1] == "supervisor_finished"
    assert (
        names.count("call_started") == names.count("call_finished") == names.count("cleanup_confirmed") == 2
    )
    assert {e.get("phase") for e in events if e["event"] == "heartbeat"} >= {
        "in_call",
        "between_calls",
        "finishing",
    }
    assert not (inv / "workspace").exists() and not (inv / "active-child.json").exists()
    kinds = [(line.kind, line.id) for line in Store(ready["root"]).ledger()]
    assert kinds.index(("invocation", r.invocation_id)) < kinds.index(("result", r.invocation_id))


def test_driver_that_forks_escapes_and_ignores_sigterm_is_killed_on_timeout(
    results: dict[str, InvocationResult],
) -> None:
    r = results["fork_escape"]
    assert _outcome(r) == ("timed_out", "invalid", "not_evaluated", "command_timeout")
    (receipt,) = r.call_receipts
    assert receipt.cleanup.status == "confirmed" and r.cleanup_status == "confirmed"
    assert receipt.cleanup.signals == ["SIGTERM", "SIGKILL"]
    assert receipt.cleanup.escaped >= 2 and receipt.cleanup.survivors == []
    assert receipt.returncode == -signal.SIGKILL


def test_hanging_driver_times_out(results: dict[str, InvocationResult]) -> None:
    r = results["hang"]
    assert _outcome(r) == ("timed_out", "invalid", "not_evaluated", "command_timeout")
    (receipt,) = r.call_receipts
    assert receipt.cleanup.signals == ["SIGTERM"] and receipt.returncode == -signal.SIGTERM


def test_one_gib_stdout_flood_completes_with_head_and_tail_kept(
    ready: dict[str, Path], results: dict[str, InvocationResult]
) -> None:
    r = results["flood"]
    assert _outcome(r) == ("succeeded", "valid", "passed", "completed")
    out = r.call_receipts[0].stdout
    assert (out.total_bytes, out.kept_bytes, out.truncated) == (1 << 30, 512 << 10, True)
    log = ready["root"] / "invocations" / r.invocation_id / "calls" / "0000" / "stdout.log"
    data = log.read_bytes()
    marker = f"\n[… {(1 << 30) - (512 << 10)} bytes omitted …]\n".encode()
    assert data == b"x" * (256 << 10) + marker + b"x" * (256 << 10)
    assert jsonio.sha256_hex(data) == out.sha256
    assert r.call_receipts[0].stderr.total_bytes == len(b"flood done\n")


def test_wrong_sample_count_fails_with_the_exact_path(results: dict[str, InvocationResult]) -> None:
    r = results["wrong_count"]
    assert _outcome(r) == ("failed", "invalid", "not_evaluated", "sample_count_mismatch")
    (v,) = r.call_receipts[0].violations
    assert v.path == "subjects[0].measurements.step_time_ms.samples"
    assert int(v.observed or 0) == int(v.expected or 0) - 1
    assert r.calls.skipped == [1]


def test_correctness_failure_stops_the_plan_and_keeps_the_receipt(
    results: dict[str, InvocationResult],
) -> None:
    r = results["fail_correctness"]
    assert _outcome(r) == ("succeeded", "invalid", "failed", "correctness_failed")
    (c,) = r.correctness
    assert (c.passed, c.driver_status, c.status_consistent) == (False, "passed", False)
    assert r.calls.skipped == [1]


@pytest.mark.parametrize(
    ("mode", "outcome"),
    [
        ("undeclared_member", ("failed", "invalid", "not_evaluated", "bundle_undeclared_member")),
        ("exit_code", ("failed", "invalid", "not_evaluated", "command_failed")),
        ("leave_process", ("failed", "invalid", "not_evaluated", "driver_left_processes")),
    ],
)
def test_contract_and_command_failures(
    results: dict[str, InvocationResult], mode: str, outcome: tuple[str, ...]
) -> None:
    r = results[mode]
    assert _outcome(r) == outcome
    receipt = r.call_receipts[0]
    assert receipt.cleanup.status == "confirmed"
    if mode == "leave_process":
        assert receipt.leftover_processes >= 1
    if mode == "exit_code":
        assert receipt.returncode == 3


def test_identity_change_on_call_k_stops_and_keeps_its_correctness_receipt(
    results: dict[str, InvocationResult],
) -> None:
    r = results["identity_change"]
    assert _outcome(r) == ("succeeded", "invalid", "not_evaluated", "identity_changed")
    assert [c.identity_equal for c in r.call_receipts] == [True, False]
    assert [c.call_index for c in r.correctness] == [0, 1]
    assert r.call_receipts[1].violations[0].code == "identity_changed"
    assert r.calls.skipped == [2]


def test_rewriting_the_output_after_the_run_changes_nothing(
    ready: dict[str, Path], results: dict[str, InvocationResult]
) -> None:
    r = results["ok"]
    store = Store(ready["root"])
    output = ready["root"] / "invocations" / r.invocation_id / "calls" / "0000" / "output" / "result.json"
    original = output.read_bytes()
    output.write_text("{}")
    bundle = store.manifest(r.call_receipts[0].bundle or "")
    (entry,) = [e for e in bundle.entries if e.path == "result.json"]
    assert store.read_blob(entry.sha256, max_bytes=1 << 20) == original  # type: ignore[union-attr]
    again, _ = store.read_record(
        f"invocations/{r.invocation_id}/result.json", InvocationResult, what="result"
    )
    assert again == r


def test_dedupe_retry_and_limits_outside_the_digest(ready: dict[str, Path]) -> None:
    root = ready["root"]
    workload.set_behavior(ready["behavior"], {"mode": "exit_code", "only_invocations": "inv-"})
    first = invocation.submit_smoke(root, case_ids=["b"], samples_per_call=2, limits=FAST)
    assert invocation.wait(root, first.invocation_id, timeout_s=60).summary["stop_reason"] == "command_failed"  # type: ignore[index]
    with pytest.raises(InputError) as err:
        invocation.submit_smoke(root, case_ids=["b"], samples_per_call=2, limits=FAST)
    assert (err.value.code, err.value.expected) == ("retry_required", first.invocation_id)
    with pytest.raises(InputError) as err:
        invocation.submit_smoke(
            root, case_ids=["b"], samples_per_call=2, limits=FAST, retry_of="inv-" + "0" * 32
        )
    assert err.value.code == "retry_invalid"
    workload.set_behavior(ready["behavior"], {"mode": "ok"})
    retry = invocation.submit_smoke(
        root, case_ids=["b"], samples_per_call=2, limits=FAST, retry_of=first.invocation_id
    )
    assert retry.invocation_id == first.invocation_id + "-r1" and not retry.deduplicated
    assert retry.request_digest == first.request_digest
    assert invocation.wait(root, retry.invocation_id, timeout_s=60).summary["verdict"] == "passed"  # type: ignore[index]
    other_limits = Limits(command_timeout_s=99, cleanup_timeout_s=9)
    repeat = invocation.submit_smoke(
        root, case_ids=["b"], samples_per_call=2, limits=other_limits, retry_of=first.invocation_id
    )
    assert (repeat.invocation_id, repeat.deduplicated) == (retry.invocation_id, True)
    plain = invocation.submit_smoke(root, case_ids=["b"], samples_per_call=2, limits=other_limits)
    assert (plain.invocation_id, plain.deduplicated) == (retry.invocation_id, True)
    calls = [json.loads(x) for x in (ready["behavior"] / "calls.log").read_text().splitlines()]
    assert sum(1 for c in calls if c["invocation_id"] == retry.invocation_id) == 1


def _wait_running(root: Path, inv_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        st = invocation.status(root, inv_id)
        if st.state == "running" and st.calls.current is not None:
            return
        time.sleep(0.05)
    raise AssertionError("the call never started")


def _snapshot(path: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*"))


def test_wait_on_an_invocation_that_is_lost_exits_2(ready: dict[str, Path], tmp_path: Path) -> None:
    """``--wait`` must not report success for a lost invocation: kill -9 its supervisor mid-call."""
    root = ready["root"]
    workload.set_behavior(ready["behavior"], {"mode": "hang", "only_invocations": "inv-"})
    request = {
        "root": str(root),
        "plan": {"case_ids": ["a"], "samples_per_call": next(_samples), "warmup_per_call": 0},
        "limits": {"command_timeout_s": 300},
    }
    (tmp_path / "baseline.json").write_text(json.dumps(request))
    (root / "invocations").mkdir(exist_ok=True)
    before = set((root / "invocations").iterdir())
    argv = ["baseline", "--request", str(tmp_path / "baseline.json"), "--wait", "--json"]
    waiting = subprocess.Popen(
        [sys.executable, "-m", "gpuopt", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (new := set((root / "invocations").iterdir()) - before) and time.monotonic() < deadline:
        time.sleep(0.05)
    (inv,) = new
    while not (inv / "request.json").is_file() and time.monotonic() < deadline:
        time.sleep(0.05)  # the folder appears before its request is written
    _wait_running(root, inv.name)
    sup = json.loads((inv / "supervisor.json").read_bytes())
    os.kill(sup["pid"], signal.SIGKILL)
    out, err = waiting.communicate(timeout=120)
    cancelled = gpuopt("cancel", str(root), inv.name, "--json")
    workload.set_behavior(ready["behavior"], {"mode": "ok"})
    assert waiting.returncode == 2, (out, err[-2000:])
    envelope = json.loads(out)
    assert envelope["ok"] is False and [e["code"] for e in envelope["errors"]] == ["invocation_lost"]
    assert envelope["data"]["submission"]["status"]["state"] == "lost"
    assert envelope["data"]["result"] is None
    assert cancelled.code == 0 and cancelled.json()["data"]["cleanup_status"] == "confirmed"
    assert procs.wait_gone(str(ready["behavior"])) == []


def test_status_is_running_then_lost_after_kill_9_and_cancel_kills_the_orphan(ready: dict[str, Path]) -> None:
    root = ready["root"]
    workload.set_behavior(ready["behavior"], {"mode": "fork_escape", "only_invocations": "inv-"})
    out = invocation.submit_smoke(
        root, case_ids=["a"], samples_per_call=next(_samples), limits=Limits(command_timeout_s=300)
    )
    _wait_running(root, out.invocation_id)
    inv = root / "invocations" / out.invocation_id
    sup = json.loads((inv / "supervisor.json").read_bytes())
    os.kill(sup["pid"], signal.SIGSTOP)  # no heartbeat may land between the two snapshots
    before = _snapshot(inv)
    running = gpuopt("status", str(root), out.invocation_id, "--json")
    assert running.json()["data"]["invocation"]["state"] == "running"
    assert _snapshot(inv) == before  # status never writes
    os.kill(sup["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _native.proc_alive(sup["pid"], sup["start_token"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    st = invocation.status(root, out.invocation_id)
    assert (st.state, st.cleanup_status, st.result_ref) == ("lost", "orphan_running", None)
    assert procs.running(str(ready["behavior"])) != []
    assert _snapshot(inv) == before
    cancelled = gpuopt("cancel", str(root), out.invocation_id, "--json")
    assert cancelled.code == 0, cancelled.stdout
    assert cancelled.json()["data"]["cleanup_status"] == "confirmed"
    assert procs.wait_gone(str(ready["behavior"])) == []
    assert not (inv / "active-child.json").exists()
    events = [json.loads(x)["event"] for x in (inv / "events.jsonl").read_text().splitlines()]
    assert events[-2:] == ["cancel_requested", "cleanup_confirmed"]
    with pytest.raises(InputError) as err:
        invocation.submit_smoke(
            root,
            case_ids=["a"],
            samples_per_call=int(json.loads((inv / "request.json").read_bytes())["plan"]["samples_per_call"]),
        )
    assert err.value.code == "retry_required"


def test_cancel_of_a_running_invocation(ready: dict[str, Path]) -> None:
    root = ready["root"]
    workload.set_behavior(ready["behavior"], {"mode": "hang", "only_invocations": "inv-"})
    out = invocation.submit_smoke(
        root,
        case_ids=["a", "b"],
        samples_per_call=next(_samples),
        limits=Limits(command_timeout_s=300, termination_grace_s=0.5),
    )
    _wait_running(root, out.invocation_id)
    assert invocation.status(root, out.invocation_id).eta_s is None  # no call has finished yet
    first = invocation.cancel(root, out.invocation_id)
    assert first.cancel_requested
    st = invocation.wait(root, out.invocation_id, timeout_s=60)
    assert st.eta_s == 0.0
    assert st.summary == {
        "execution_status": "cancelled",
        "measurement_validity": "invalid",
        "verdict": "not_evaluated",
        "stop_reason": "cancelled",
    }
    again = invocation.cancel(root, out.invocation_id)  # a repeat only reports
    assert again.model_dump(exclude={"heartbeat_age_s"}) == invocation.status(
        root, out.invocation_id
    ).model_dump(exclude={"heartbeat_age_s"})
    assert procs.wait_gone(str(ready["behavior"])) == []


def test_unresponsive_when_the_heartbeat_is_old(ready: dict[str, Path]) -> None:
    root = ready["root"]
    workload.set_behavior(ready["behavior"], {"mode": "hang", "only_invocations": "inv-"})
    out = invocation.submit_smoke(
        root,
        case_ids=["b"],
        samples_per_call=next(_samples),
        limits=Limits(command_timeout_s=300, termination_grace_s=0.3),
    )
    _wait_running(root, out.invocation_id)
    sup = json.loads((root / "invocations" / out.invocation_id / "supervisor.json").read_bytes())
    os.kill(sup["pid"], signal.SIGSTOP)
    try:
        assert not invocation.status(root, out.invocation_id).unresponsive
        later = invocation.status(root, out.invocation_id, now=time.time() + 61)
        assert (later.state, later.unresponsive, later.phase) == ("running", True, "in_call")
    finally:
        os.kill(sup["pid"], signal.SIGCONT)
    invocation.cancel(root, out.invocation_id)
    assert invocation.wait(root, out.invocation_id, timeout_s=60).state == "completed"
    assert procs.wait_gone(str(ready["behavior"])) == []


def test_launch_deadlines(ready: dict[str, Path]) -> None:
    root = ready["root"]
    with pytest.raises(InputError) as err:
        invocation.submit_smoke(
            root, samples_per_call=next(_samples), limits=Limits(launch_deadline_epoch=time.time() - 1)
        )
    assert err.value.code == "deadline_passed"
    workload.set_behavior(ready["behavior"], {"mode": "ok"})
    core_samples = next(_samples)
    target = invocation.targets.load(Store(root))[0]
    steps = [
        {
            "call_index": 0,
            "pair_index": None,
            "case_id": "a",
            "order": None,
            "roles": ["original"],
            "lifecycle": "isolated",
        }
    ]
    core = {
        "operation": "readiness_smoke",
        "plan": {
            "case_ids": ["a"],
            "pairs": None,
            "calls_per_case": 1,
            "samples_per_call": core_samples,
            "warmup_per_call": 0,
            "seed": 1,
            "lifecycle": "isolated",
        },
        "evidence_plan": steps,
        "variants": {"original": {"kind": "source", "digest": target.original.digest}},
    }
    deadline = time.time() + 1.0
    out = invocation.submit(root, core, limits=Limits(launch_deadline_epoch=deadline), start=False)
    assert invocation.status(root, out.invocation_id, now=deadline - 0.01).state == "starting"
    assert invocation.status(root, out.invocation_id, now=deadline + 0.01).state == "lost"
    time.sleep(max(deadline - time.time() + 0.05, 0))
    invocation.start_supervisor(root, out.invocation_id)
    deadline = time.monotonic() + 60
    while (
        st := invocation.status(root, out.invocation_id)
    ).state != "completed" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert st.summary == {
        "execution_status": "invalid",
        "measurement_validity": "invalid",
        "verdict": "not_evaluated",
        "stop_reason": "launch_deadline_exceeded",
    }
    assert st.cleanup_status == "not_required"


def test_root_status_lists_pending_invocations_only(ready: dict[str, Path]) -> None:
    run = gpuopt("status", str(ready["root"]), "--json")
    assert run.code == 0
    data = run.json()["data"]["root"]
    assert data["champion"] == "original"
    assert all(s["state"] != "completed" for s in data["invocations"])


def test_target_changed_is_refused_before_launch(ready: dict[str, Path]) -> None:
    target = ready["root"] / "target.json"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes().replace(b'"claim_layer":"workload"', b'"claim_layer":"kernel"'))
    with pytest.raises(InputError) as err:
        invocation.submit_smoke(ready["root"], samples_per_call=next(_samples))
    assert err.value.code == "target_invalid"


def test_eta_is_the_remaining_calls_at_the_mean_finished_call() -> None:
    # 10 planned, 4 finished at 2, 3, 2, 3 s (mean 2.5), the fifth running for 1 s: 6 x 2.5 - 1 = 14 s.
    assert invocation_status._eta("running", 10, [2.0, 3.0, 2.0, 3.0], 1.0) == 14.0
    assert (
        invocation_status._eta("running", 10, [2.0] * 9, 5.0) == 0.0
    )  # an overrunning last call: never negative
    assert invocation_status._eta("running", 10, [], 1.0) is None
    assert invocation_status._eta("lost", 10, [2.0], None) is None
    assert invocation_status._eta("completed", 10, [2.0], None) == 0.0


def test_status_reads_an_active_child_that_comes_and_goes(tmp_path: Path) -> None:
    """The supervisor replaces and removes active-child.json as calls start and end; a status read racing
    it sees a child or none, never a missing-file error (CI once hit exists-then-read)."""
    inv = "inv-" + "0" * 32
    (tmp_path / "invocations" / inv).mkdir(parents=True)
    store = Store(tmp_path)
    writer = Store(tmp_path / "invocations" / inv)
    child = ActiveChild(call_index=0, pid=1, start_token="1", pgid=1, cgroup=None, gpus=[], env_tag="T=1")
    data = jsonio.record_bytes(child)
    stop = threading.Event()

    def toggle() -> None:
        while not stop.is_set():
            writer.replace_bytes("active-child.json", data, durable=False)
            writer.remove("active-child.json", durable=False)

    thread = threading.Thread(target=toggle)
    thread.start()
    try:
        seen = {type(invocation_status._active_child(store, inv)).__name__ for _ in range(3000)}
    finally:
        stop.set()
        thread.join()
    assert seen <= {"ActiveChild", "NoneType"} and seen
