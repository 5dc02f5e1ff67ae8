"""A workload driver written for the tests: it speaks gpuopt.driver/v1 and misbehaves on demand.

``--behavior-dir DIR`` names a folder (not a file, so it is not part of the driver's frozen identity) whose
``behavior.json`` is read on every call: ``{"mode": ..., ...}``, or per sample count
``{"by_samples": {"5": {"mode": ...}}}`` so that concurrent invocations in one root can behave differently.
Every call is logged to ``DIR/calls.log``.
Modes: ok, hang, fork_escape, leave_process, flood, wrong_count, fail_correctness, report_failed,
undeclared_member, exit_code, no_result, identity_change, undeclared_metric, wrong_unit, bad_json,
rewrite_after_exit, env_dump.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import time


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


def _ignore_term() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _spawn_stubborn(escape: bool) -> int:
    pid = os.fork()
    if pid == 0:
        if escape:
            os.setsid()
            if os.fork() > 0:  # daemonize: the middle process exits, the grandchild re-parents
                os._exit(0)
        _ignore_term()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        _sleep_forever()
    return pid


def _load_impl(path: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(f"impl_{abs(hash(path))}", os.path.join(path, "impl.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    args = sys.argv[1:]
    request_path = args[args.index("--request") + 1]
    behavior_dir = args[args.index("--behavior-dir") + 1]
    with open(os.path.join(behavior_dir, "behavior.json")) as f:
        behavior = json.load(f)
    with open(request_path) as f:
        req = json.load(f)
    by_samples = behavior.get("by_samples", {})
    samples = str(next(iter(req["sampling"]["samples_per_call"].values())))
    if samples in by_samples:  # concurrent scenarios in one root, told apart by their unique sample count
        behavior = by_samples[samples]
    mode = behavior.get("mode", "ok")
    only = behavior.get("only_invocations")
    if only and not req["invocation_id"].startswith(only):
        mode = "ok"
    calls = behavior.get("only_calls")
    if calls is not None and req["call_index"] not in calls:
        mode = "ok"
    with open(os.path.join(behavior_dir, "calls.log"), "a") as log:
        log.write(json.dumps({"invocation_id": req["invocation_id"], "call_index": req["call_index"], "pid": os.getpid(), "mode": mode}) + "\n")
    if mode == "env_dump":
        with open(os.path.join(behavior_dir, "env.json"), "w") as f:
            with open("/proc/self/environ", "rb") as env_file:  # the environment as exec'd, before Python's own changes
                initial = dict(item.decode().split("=", 1) for item in env_file.read().split(b"\0") if item)
            json.dump({"env": initial, "cwd": os.getcwd(), "pgid": os.getpgid(0), "sid": os.getsid(0), "pid": os.getpid(), "argv": sys.argv}, f)
    if mode == "hang":
        _sleep_forever()
    if mode == "fork_escape":
        _ignore_term()
        for escape in (False, True, True):
            _spawn_stubborn(escape)
        _sleep_forever()
    if mode == "flood":
        chunk = b"x" * (1 << 20)
        left = int(behavior.get("flood_bytes", 1 << 30))
        out = sys.stdout.buffer
        while left > 0:
            n = min(left, len(chunk))
            out.write(chunk[:n])
            left -= n
        out.flush()
        sys.stderr.write("flood done\n")
    out_dir = req["output_dir"]
    case = req["case"]["id"]
    with open(os.path.join(req["test_set"]["path"], f"{case}.json")) as f:
        data = json.load(f)
    subjects = []
    for s in req["subjects"]:
        impl = _load_impl(s["path"])
        for _ in range(req["sampling"]["warmup_per_call"]):
            impl.run(data)
        start = time.monotonic_ns()
        measurements = {}
        for metric, spec in req["metrics"].items():
            n = req["sampling"]["samples_per_call"][metric]
            if mode == "wrong_count" and metric == behavior.get("metric", metric):
                n -= 1
            samples = []
            for _ in range(n):
                t0 = time.perf_counter_ns()
                out = impl.run(data)
                samples.append(max((time.perf_counter_ns() - t0) / 1e6, 1e-6))
            unit = "s" if mode == "wrong_unit" else spec["unit"]
            measurements[metric] = {"unit": unit, "samples": samples}
        if mode == "undeclared_metric":
            measurements["extra_metric"] = {"unit": "ms", "samples": [1.0]}
        err = abs(out - data["expected"])
        status = "passed"
        if mode == "fail_correctness":
            err, status = 1.0, "passed"
        if mode == "report_failed":
            status = "failed"
        subjects.append(
            {
                "role": s["role"],
                "digest": s["digest"],
                "window": {"start_mono_ns": start, "end_mono_ns": time.monotonic_ns()},
                "correctness": {"status": status, "metrics": {m: err for m in req["correctness_metrics"]}},
                "measurements": measurements,
            }
        )
    frameworks = {"python": sys.version.split()[0]}
    if mode == "identity_change":
        frameworks["changed"] = "yes"
    result = {
        "protocol": "gpuopt.driver-result/v1",
        "request_digest": req["request_digest"],
        "call_index": req["call_index"],
        "case_id": case,
        "subjects": subjects,
        "runtime_identity": {
            "gpu_uuids": [u for u in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if u],
            "gpu_names": [],
            "driver_version": None,
            "cuda_runtime_version": None,
            "frameworks": frameworks,
            "provenance": behavior.get(
                "provenance",
                {"kind": "host", "image_digest": None, "lineage_complete": True, "lineage": [], "components": []},
            ),
        },
        "artifacts": [],
        "cleanup": {"status": "confirmed", "live_tasks": []},
    }
    if mode == "undeclared_member":
        with open(os.path.join(out_dir, "extra.bin"), "w") as f:
            f.write("not declared")
    if mode == "no_result":
        return 0
    text = json.dumps(result)
    if mode == "bad_json":
        text = text.replace('"call_index": ', '"call_index": NaN, "x": ', 1)
    tmp = os.path.join(out_dir, ".result.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(out_dir, "result.json"))
    if mode == "leave_process":
        _spawn_stubborn(True)
    if mode == "rewrite_after_exit":
        if os.fork() == 0:
            os.setsid()
            time.sleep(0.3)
            with open(os.path.join(out_dir, "result.json"), "w") as f:
                f.write("{}")
            os._exit(0)
    if mode == "exit_code":
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
