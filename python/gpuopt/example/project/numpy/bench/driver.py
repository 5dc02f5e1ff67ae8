#!/usr/bin/env python3
"""The example's workload driver (protocol gpuopt.driver/v1): times a layer normalization on the CPU.

gpuopt launches it once per call with ``--request /abs/path/calls/NNNN/request.json``. It builds the case's
input from ``testset/cases.json`` and the request's ``input_seed`` (identical for both subjects of a pair),
imports each subject's ``layernorm.py`` from the frozen copy gpuopt materialized, runs ``warmup_per_call``
warmups and ``samples_per_call`` timed runs, and reports the maximum absolute error of the last output
against a float64 reference computed here. gpuopt applies the Target's accuracy rule itself.

It supports ``same_process``: both subjects of a pair run in this one process (the interpreter and numpy
are the shared state; each subject's module is imported fresh).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

REQUEST_KEYS = {
    "protocol", "request_digest", "target_id", "invocation_id", "call_index", "operation", "case", "test_set",
    "accuracy_reference", "subjects", "acquisition", "sampling", "metrics", "correctness_metrics", "pair",
    "output_dir", "driver_identity",
}  # fmt: skip
MEASURE = {"time_ms": "ms"}


def load_case(test_set_path: str, case_id: str, input_seed: int) -> np.ndarray:
    with open(test_set_path, encoding="utf-8") as f:
        shape = json.load(f)["cases"][case_id]
    return np.random.default_rng(input_seed).standard_normal((shape["rows"], shape["cols"]))


def reference(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def load_implementation(subject_path: str, role: str) -> ModuleType:
    name = f"subject_{role}_{hashlib.sha256(subject_path.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, os.path.join(subject_path, "layernorm.py"))
    if spec is None or spec.loader is None:
        raise SystemExit(f"no layernorm.py in {subject_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def collect_identity() -> dict[str, Any]:
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    return {
        "gpu_uuids": [],
        "gpu_names": [],
        "driver_version": None,
        "cuda_runtime_version": None,
        "frameworks": {"python": platform.python_version(), "numpy": np.__version__},
        "provenance": {
            "kind": "container" if in_container else "host",
            "image_digest": None,
            "lineage_complete": not in_container,
            "lineage": [],
            "components": [],
        },
    }


def _es_number(x: float) -> str:
    """ECMAScript number formatting (RFC 8785)."""
    if x == 0:
        return "0"
    mantissa, _, exp_text = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    n = len(int_part) + int(exp_text or 0)
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
    frac = "." + digits[1:] if k > 1 else ""
    return sign + digits[0] + frac + "e" + ("+" if exp > 0 else "-") + str(abs(exp))


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
    if not isinstance(req, dict) or set(req) != REQUEST_KEYS or req["protocol"] != "gpuopt.driver-request/v1":
        raise SystemExit(2)
    core = {k: v for k, v in req.items() if k != "request_digest"}
    if hashlib.sha256(canonical(core).encode()).hexdigest() != req["request_digest"]:
        print("request_digest does not match the request", file=sys.stderr)
        raise SystemExit(2)
    return req


def measure(req: dict[str, Any]) -> list[dict[str, Any]]:
    sampling = req["sampling"]
    x = load_case(req["test_set"]["path"], req["case"]["id"], sampling["input_seed"])
    expected = reference(x)
    subjects = []
    for s in req["subjects"]:  # in execution order (AB = reference first)
        impl = load_implementation(s["path"], s["role"])
        for _ in range(sampling["warmup_per_call"]):
            impl.run(x)
        start = time.monotonic_ns()
        measurements: dict[str, Any] = {}
        output = None
        for metric, spec in req["metrics"].items():
            if MEASURE.get(metric) != spec["unit"]:
                raise SystemExit(f"this driver does not measure {metric} in {spec['unit']}")
            samples = []
            for _ in range(sampling["samples_per_call"][metric]):
                t0 = time.perf_counter_ns()
                output = impl.run(x)
                samples.append((time.perf_counter_ns() - t0) / 1e6)
            measurements[metric] = {"unit": spec["unit"], "samples": samples}
        error = float(np.max(np.abs(output - expected))) if output is not None else 1e300
        error = error if np.isfinite(error) else 1e300  # NaN or inf outputs fail the rule, as a number
        subjects.append(
            {
                "role": s["role"],
                "digest": s["digest"],
                "window": {"start_mono_ns": start, "end_mono_ns": time.monotonic_ns()},
                "correctness": {
                    "status": "passed" if error <= 1e-9 else "failed",
                    "metrics": {"max_abs_error": error},
                },
                "measurements": measurements,
            }
        )
    return subjects


def main(argv: list[str]) -> int:
    with open(argv[argv.index("--request") + 1], encoding="utf-8") as f:
        req = check_request(json.load(f))
    subjects = measure(req)
    out = Path(req["output_dir"]) / "result.json"
    tmp = out.with_name(".result.json.tmp")
    tmp.write_text(
        json.dumps(
            {
                "protocol": "gpuopt.driver-result/v1",
                "request_digest": req["request_digest"],
                "call_index": req["call_index"],
                "case_id": req["case"]["id"],
                "subjects": subjects,
                "runtime_identity": collect_identity(),
                "artifacts": [],
                "cleanup": {"status": "confirmed", "live_tasks": []},
            },
            allow_nan=False,
        ),
        encoding="utf-8",
    )
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
