#!/usr/bin/env python3
"""A gpuopt workload driver (protocol gpuopt.driver/v1) — a template written by ``gpuopt driver init``.

gpuopt runs this program once per call, with argv (never a shell), in its own process group:

    <your argv...> --request /abs/path/calls/NNNN/request.json

It reads the request, measures every subject (a frozen copy of your code) on one test case, and writes
``<output_dir>/result.json``. gpuopt validates that result strictly and computes correctness itself from the
Target's frozen rules: your ``passed``/``failed`` cannot override a failed rule.

What a driver must do (and must not):
  * validate the request (closed schema, recomputed request_digest) and exit 2 if it is bad;
  * use only the paths in the request (subjects, test set, accuracy reference, output_dir, $TMPDIR);
  * run the subjects in the given order, ``warmup_per_call`` warmup runs, then exactly
    ``samples_per_call[metric]`` samples per metric; report raw samples, never summaries;
  * report the correctness metrics named in ``correctness_metrics`` and the runtime identity;
  * never choose candidates, change the test scope or install anything;
  * leave no process behind (everything stays in this process group) and always run its cleanup.

Optional capability ``torch_trace``: a driver that declares ``"capabilities": ["torch_trace"]`` in its
readiness declaration writes a Kineto trace of its measured region to ``$GPUOPT_TORCH_TRACE`` whenever gpuopt
sets it (``gpuopt capture`` with tool torch, one subject per call); see :func:`torch_trace` below.

Edit the four functions marked EDIT below; keep everything else. This file needs only the standard library.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REQUEST_KEYS = {
    "protocol", "request_digest", "target_id", "invocation_id", "call_index", "operation", "case", "test_set",
    "accuracy_reference", "subjects", "acquisition", "sampling", "metrics", "correctness_metrics", "pair",
    "output_dir", "driver_identity",
}  # fmt: skip


# ---- EDIT 1: load one test case ----------------------------------------------------------------------------
def load_case(test_set_path: str, case_id: str, input_seed: int) -> Any:
    """Loads the inputs of case ``case_id`` from the frozen test set. Use ``input_seed`` for any random input:
    both subjects of a pair get the same seed."""
    with open(os.path.join(test_set_path, f"{case_id}.json"), encoding="utf-8") as f:
        return json.load(f)


# ---- EDIT 2: import one subject ----------------------------------------------------------------------------
def load_implementation(subject_path: str, role: str) -> ModuleType:
    """Imports the code under test from a subject folder (a fresh copy per invocation; no path caches)."""
    spec = importlib.util.spec_from_file_location(f"subject_{role}", os.path.join(subject_path, "impl.py"))
    if spec is None or spec.loader is None:
        raise SystemExit(f"no impl.py in {subject_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- EDIT 3: one measured run ------------------------------------------------------------------------------
def run_once(impl: ModuleType, case: Any) -> Any:
    """Runs the workload once and returns its output. On a GPU, synchronize the device before returning."""
    return impl.run(case)


MEASURE: dict[str, str] = {"step_time_ms": "ms"}
"""The metrics this driver can measure (name -> unit); each sample is one timed ``run_once``."""


# ---- EDIT 4: correctness metrics ---------------------------------------------------------------------------
def correctness(output: Any, case: Any, reference_path: str | None) -> dict[str, float]:
    """The correctness metrics of one subject's last output (gpuopt applies the frozen rules to them)."""
    return {"max_abs_error": abs(float(output) - float(case["expected"]))}


def driver_says_passed(metrics: dict[str, float]) -> bool:
    """Your own verdict, recorded next to gpuopt's (a disagreement is flagged, never trusted)."""
    return all(math.isfinite(v) and v <= 1e-3 for v in metrics.values())


# ---- optional capability: torch_trace ----------------------------------------------------------------------
@contextlib.contextmanager
def torch_trace(path: str | None) -> Iterator[None]:
    """Profiles the block with torch.profiler and writes its Kineto trace to ``path``
    (``$GPUOPT_TORCH_TRACE``); without a path it does nothing. Only a driver that declares the
    ``torch_trace`` capability is asked."""
    if not path:
        yield
        return
    # Imported only when gpuopt asks for a trace: the template itself needs only the standard library.
    torch = importlib.import_module("torch")
    tp = importlib.import_module("torch.profiler")
    activities = [tp.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(tp.ProfilerActivity.CUDA)
    with tp.profile(activities=activities) as prof, tp.record_function("measure"):
        yield
    prof.export_chrome_trace(path)


# ---- runtime identity --------------------------------------------------------------------------------------
def collect_identity() -> dict[str, Any]:
    """The runtime this call ran in; it must be identical on every call of a Target."""
    visible = [u for u in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if u]
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    return {
        "gpu_uuids": visible,
        "gpu_names": [],  # e.g. torch.cuda.get_device_name(i) for each visible device, in CUDA order
        "driver_version": None,  # e.g. from pynvml.nvmlSystemGetDriverVersion() on a GPU host
        "cuda_runtime_version": None,  # e.g. torch.version.cuda
        "frameworks": {"python": platform.python_version()},
        "provenance": {
            "kind": "container" if in_container else "host",
            "image_digest": None,
            "lineage_complete": not in_container,
            "lineage": [],
            "components": [],
        },
    }


# ---- protocol plumbing (keep) ------------------------------------------------------------------------------
def _no_constants(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _es_number(x: float) -> str:
    """ECMAScript number formatting (RFC 8785), from Python's shortest round-trip repr."""
    if x == 0:
        return "0"
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    n = len(int_part) + int(exp_text or 0)  # the decimal point sits after n digits
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    sign = "-" if x < 0 else ""
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    exp = n - 1
    return (
        sign
        + digits[0]
        + ("." + digits[1:] if k > 1 else "")
        + "e"
        + ("+" if exp > 0 else "-")
        + str(abs(exp))
    )


def canonical(value: Any) -> str:
    """RFC 8785 canonical JSON (what gpuopt hashes the request with)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        return _es_number(float(value))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(value[k]) for k in keys) + "}"


def check_request(req: Any) -> dict[str, Any]:
    """Closed schema and recomputed digest; a bad request exits 2."""
    if not isinstance(req, dict) or set(req) != REQUEST_KEYS or req["protocol"] != "gpuopt.driver-request/v1":
        raise SystemExit(2)
    core = {k: v for k, v in req.items() if k != "request_digest"}
    if hashlib.sha256(canonical(core).encode()).hexdigest() != req["request_digest"]:
        print("request_digest does not match the request", file=sys.stderr)
        raise SystemExit(2)
    return req


def write_atomically(path: Path, value: dict[str, Any]) -> None:
    tmp = path.with_name(".result.json.tmp")
    tmp.write_text(json.dumps(value, allow_nan=False), encoding="utf-8")
    os.replace(tmp, path)


def measure(req: dict[str, Any]) -> list[dict[str, Any]]:
    sampling = req["sampling"]
    case = load_case(req["test_set"]["path"], req["case"]["id"], sampling["input_seed"])
    reference = req["accuracy_reference"]["path"] if req["accuracy_reference"] else None
    subjects = []
    for s in req["subjects"]:  # already in execution order (AB = reference first)
        impl = load_implementation(s["path"], s["role"])
        for _ in range(sampling["warmup_per_call"]):
            run_once(impl, case)
        start = time.monotonic_ns()
        measurements, output = {}, None
        with torch_trace(os.environ.get("GPUOPT_TORCH_TRACE")):  # the measured region
            for metric, spec in req["metrics"].items():
                if MEASURE.get(metric) != spec["unit"]:
                    raise SystemExit(f"this driver does not measure {metric} in {spec['unit']}")
                samples = []
                for _ in range(sampling["samples_per_call"][metric]):
                    t0 = time.perf_counter_ns()
                    output = run_once(impl, case)
                    samples.append((time.perf_counter_ns() - t0) / 1e6)
                measurements[metric] = {"unit": spec["unit"], "samples": samples}
        metrics = correctness(output, case, reference)
        subjects.append(
            {
                "role": s["role"],
                "digest": s["digest"],
                "window": {"start_mono_ns": start, "end_mono_ns": time.monotonic_ns()},
                "correctness": {
                    "status": "passed" if driver_says_passed(metrics) else "failed",
                    "metrics": metrics,
                },
                "measurements": measurements,
            }
        )
    return subjects


def read_request(argv: list[str]) -> dict[str, Any]:
    """Reads the request named by ``--request`` strictly (no duplicate keys, no NaN) and checks it."""
    with open(argv[argv.index("--request") + 1], encoding="utf-8") as f:
        return check_request(json.load(f, object_pairs_hook=_no_duplicates, parse_constant=_no_constants))


def main(argv: list[str]) -> int:
    req = read_request(argv)
    try:
        subjects = measure(req)
    finally:
        cleanup = {"status": "confirmed", "live_tasks": []}  # release pools, servers, device memory here
    write_atomically(
        Path(req["output_dir"]) / "result.json",
        {
            "protocol": "gpuopt.driver-result/v1",
            "request_digest": req["request_digest"],
            "call_index": req["call_index"],
            "case_id": req["case"]["id"],
            "subjects": subjects,
            "runtime_identity": collect_identity(),
            "artifacts": [],  # [{"kind", "path" (relative to output_dir), "sha256"}] for files you keep
            "cleanup": cleanup,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
