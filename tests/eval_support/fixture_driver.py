"""A workload driver written for the tests: it speaks gpuopt.driver/v1 and misbehaves on demand.

``--behavior-dir DIR`` names a folder (not a file, so it is not part of the driver's frozen identity) whose
``behavior.json`` is read on every call: ``{"mode": ..., ...}``, or per sample count
``{"by_samples": {"5": {"mode": ...}}}`` so that concurrent invocations in one root can behave differently.
Every call is logged to ``DIR/calls.log``. Modes: ok, hang, fork_escape, leave_process, flood, wrong_count,
fail_correctness, report_failed, undeclared_member, exit_code, no_result, identity_change,
undeclared_metric, wrong_unit, bad_json, env_dump, arm_burner (creates ``DIR/burn`` for ``hold_s`` seconds, so
that a CPU burner outside the invocation, polling that file, runs inside this call's window).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import time
from typing import Any


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


def _ignore_term() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _spawn_stubborn(escape: bool) -> None:
    """A child that ignores SIGTERM and sleeps; with ``escape`` it leaves the group (setsid + daemonize)."""
    if os.fork() != 0:
        return
    if escape:
        os.setsid()
        if os.fork() > 0:  # the middle process exits, the grandchild is re-parented
            os._exit(0)
    _ignore_term()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _sleep_forever()


def _load_impl(path: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"impl_{abs(hash(path))}", os.path.join(path, "impl.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _behavior(behavior_dir: str, req: dict[str, Any]) -> dict[str, Any]:
    with open(os.path.join(behavior_dir, "behavior.json")) as f:
        behavior: dict[str, Any] = json.load(f)
    samples = str(next(iter(req["sampling"]["samples_per_call"].values())))
    behavior = behavior.get("by_samples", {}).get(samples, behavior)
    only = behavior.get("only_invocations")
    calls = behavior.get("only_calls")
    if (only and not req["invocation_id"].startswith(only)) or (
        calls is not None and req["call_index"] not in calls
    ):
        return {"mode": "ok"}
    return behavior


def _dump_env(behavior_dir: str) -> None:
    with open("/proc/self/environ", "rb") as env_file:  # the environment as exec'd, before Python's own edits
        initial = dict(item.decode().split("=", 1) for item in env_file.read().split(b"\0") if item)
    facts = {
        "env": initial,
        "cwd": os.getcwd(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
        "pid": os.getpid(),
    }
    with open(os.path.join(behavior_dir, "env.json"), "w") as f:
        json.dump({**facts, "argv": sys.argv}, f)


def _flood(nbytes: int) -> None:
    chunk = b"x" * (1 << 20)
    out = sys.stdout.buffer
    while nbytes > 0:
        n = min(nbytes, len(chunk))
        out.write(chunk[:n])
        nbytes -= n
    out.flush()
    sys.stderr.write("flood done\n")


def _before(mode: str, behavior: dict[str, Any], behavior_dir: str) -> None:
    """Misbehaviour that happens before any measurement."""
    if mode == "env_dump":
        _dump_env(behavior_dir)
    elif mode == "hang":
        _sleep_forever()
    elif mode == "fork_escape":
        _ignore_term()
        for escape in (False, True, True):
            _spawn_stubborn(escape)
        _sleep_forever()
    elif mode == "flood":
        _flood(int(behavior.get("flood_bytes", 1 << 30)))
    elif mode == "arm_burner":
        flag = os.path.join(behavior_dir, "burn")
        with open(flag, "w"):
            pass
        time.sleep(float(behavior.get("hold_s", 0.6)))
        os.remove(flag)


def _subject(req: dict[str, Any], s: dict[str, Any], data: Any, mode: str) -> dict[str, Any]:
    impl = _load_impl(s["path"])
    for _ in range(req["sampling"]["warmup_per_call"]):
        impl.run(data)
    start = time.monotonic_ns()
    measurements = {}
    out = None
    for metric, spec in req["metrics"].items():
        n = req["sampling"]["samples_per_call"][metric] - (1 if mode == "wrong_count" else 0)
        samples = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            out = impl.run(data)
            samples.append(max((time.perf_counter_ns() - t0) / 1e6, 1e-6))
        measurements[metric] = {"unit": "s" if mode == "wrong_unit" else spec["unit"], "samples": samples}
    if mode == "undeclared_metric":
        measurements["extra_metric"] = {"unit": "ms", "samples": [1.0]}
    err = 1.0 if mode == "fail_correctness" else abs((out or 0) - data["expected"])
    status = "failed" if mode == "report_failed" else "passed"
    return {
        "role": s["role"],
        "digest": s["digest"],
        "window": {"start_mono_ns": start, "end_mono_ns": time.monotonic_ns()},
        "correctness": {"status": status, "metrics": {m: err for m in req["correctness_metrics"]}},
        "measurements": measurements,
    }


def _result(req: dict[str, Any], subjects: list[dict[str, Any]], mode: str, behavior: dict[str, Any]) -> str:
    frameworks = {
        "python": sys.version.split()[0],
        **({"changed": "yes"} if mode == "identity_change" else {}),
    }
    host = {"kind": "host", "image_digest": None, "lineage_complete": True, "lineage": [], "components": []}
    result = {
        "protocol": "gpuopt.driver-result/v1",
        "request_digest": req["request_digest"],
        "call_index": req["call_index"],
        "case_id": req["case"]["id"],
        "subjects": subjects,
        "runtime_identity": {
            "gpu_uuids": [u for u in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if u],
            "gpu_names": [],
            "driver_version": None,
            "cuda_runtime_version": None,
            "frameworks": frameworks,
            "provenance": behavior.get("provenance", host),
        },
        "artifacts": [],
        "cleanup": {"status": "confirmed", "live_tasks": []},
    }
    text = json.dumps(result)
    if mode == "bad_json":
        text = text.replace('"call_index": ', '"call_index": NaN, "x": ', 1)
    return text


def main() -> int:
    args = sys.argv[1:]
    behavior_dir = args[args.index("--behavior-dir") + 1]
    with open(args[args.index("--request") + 1]) as f:
        req = json.load(f)
    behavior = _behavior(behavior_dir, req)
    mode = behavior.get("mode", "ok")
    with open(os.path.join(behavior_dir, "calls.log"), "a") as log:
        entry = {"invocation_id": req["invocation_id"], "call_index": req["call_index"], "pid": os.getpid()}
        log.write(json.dumps({**entry, "mode": mode}) + "\n")
    _before(mode, behavior, behavior_dir)
    with open(os.path.join(req["test_set"]["path"], f"{req['case']['id']}.json")) as f:
        data = json.load(f)
    subjects = [_subject(req, s, data, mode) for s in req["subjects"]]
    out_dir = req["output_dir"]
    if mode == "undeclared_member":
        with open(os.path.join(out_dir, "extra.bin"), "w") as f:
            f.write("not declared")
    if mode == "no_result":
        return 0
    tmp = os.path.join(out_dir, ".result.tmp")
    with open(tmp, "w") as f:
        f.write(_result(req, subjects, mode, behavior))
    os.replace(tmp, os.path.join(out_dir, "result.json"))
    if mode == "leave_process":
        _spawn_stubborn(True)
    return 3 if mode == "exit_code" else 0


if __name__ == "__main__":
    sys.exit(main())
