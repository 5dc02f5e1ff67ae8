#!/usr/bin/env python3
"""The example's workload driver (protocol gpuopt.driver/v1): times a layer normalization on the CPU.

gpuopt launches it once per call with ``--request /abs/path/calls/NNNN/request.json``. It builds the case's
input from ``testset/cases.json`` and the request's ``input_seed`` (identical for both subjects of a pair),
imports each subject's ``layernorm.py`` from the frozen copy gpuopt materialized, runs ``warmup_per_call``
warmups and ``samples_per_call`` timed runs, and reports the maximum absolute error of the last output
against a float64 reference computed here. gpuopt applies the Target's accuracy rule itself.

It supports ``same_process``: both subjects of a pair run in this one process (the interpreter and numpy
are the shared state; each subject's module is imported fresh).

The request check and the atomic result write are the ones of the template that ``gpuopt driver init``
writes (imported from gpuopt, which runs in this interpreter).
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

from gpuopt.evaluation.driver_template import read_request, write_atomically

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


def result(req: dict[str, Any], subjects: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "protocol": "gpuopt.driver-result/v1",
        "request_digest": req["request_digest"],
        "call_index": req["call_index"],
        "case_id": req["case"]["id"],
        "subjects": subjects,
        "runtime_identity": collect_identity(),
        "artifacts": [],
        "cleanup": {"status": "confirmed", "live_tasks": []},
    }


def main(argv: list[str]) -> int:
    req = read_request(argv)
    subjects = measure(req)
    write_atomically(Path(req["output_dir"]) / "result.json", result(req, subjects))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
