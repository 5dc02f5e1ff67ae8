#!/usr/bin/env python3
"""The example's GPU workload driver (protocol gpuopt.driver/v1): times a softmax on a CUDA GPU with torch.

gpuopt launches it once per call with ``--request /abs/path/calls/NNNN/request.json`` and
``CUDA_VISIBLE_DEVICES`` set to the Target's GPU UUID. It builds the case's input on the GPU from
``testset/cases.json`` and the request's ``input_seed`` (identical for both subjects of a pair), imports each
subject's ``softmax.py`` from the frozen copy gpuopt materialized, runs ``warmup_per_call`` warmups and
``samples_per_call`` timed runs (the device is synchronized before and after each), and reports the maximum
absolute error of the last output against a float64 reference. gpuopt applies the Target's accuracy rule.

It declares the ``torch_trace`` capability: under ``gpuopt capture`` with tool torch it writes a Kineto
trace of its measured region to ``$GPUOPT_TORCH_TRACE``; the region is also an NVTX range ``measure`` (for
nsys captures and ``gpuopt profile diff --marker measure``).

It supports ``same_process``: both subjects of a pair run in this one process (the interpreter, torch and
the CUDA context are the shared state; each subject's module is imported fresh).

The request check and the atomic result write are the ones of the template that ``gpuopt driver init``
writes (imported from gpuopt, which runs in this interpreter).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import platform
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from gpuopt.evaluation.driver_template import read_request, torch_trace, write_atomically

MEASURE = {"time_ms": "ms"}


def load_case(test_set_path: str, case_id: str, input_seed: int) -> torch.Tensor:
    with open(test_set_path, encoding="utf-8") as f:
        shape = json.load(f)["cases"][case_id]
    generator = torch.Generator(device="cuda").manual_seed(input_seed)
    return torch.randn(shape["rows"], shape["cols"], generator=generator, device="cuda", dtype=torch.float32)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.double(), dim=-1)


def load_implementation(subject_path: str, role: str) -> ModuleType:
    name = f"subject_{role}_{hashlib.sha256(subject_path.encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(name, os.path.join(subject_path, "softmax.py"))
    if spec is None or spec.loader is None:
        raise SystemExit(f"no softmax.py in {subject_path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def collect_identity() -> dict[str, Any]:
    """The runtime: the GPUs gpuopt made visible (by UUID), their names and the NVIDIA driver version as
    gpuopt's own observation reports them, torch and its CUDA runtime."""
    from gpuopt import gpus

    visible = [u for u in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if u]
    nvidia, _ = gpus.observe()
    by_uuid = {g.uuid: g for g in (nvidia.gpus if nvidia is not None else [])}
    in_container = os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
    return {
        "gpu_uuids": visible,
        "gpu_names": [by_uuid[u].name if u in by_uuid else "unknown" for u in visible],
        "driver_version": None if nvidia is None else nvidia.driver_version,
        "cuda_runtime_version": torch.version.cuda,
        "frameworks": {"python": platform.python_version(), "torch": torch.__version__},
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
        torch.cuda.synchronize()
        start = time.monotonic_ns()
        measurements: dict[str, Any] = {}
        output = None
        # The measured region: profiled (Kineto trace, NVTX-like range "measure") when gpuopt capture asks.
        with torch_trace(os.environ.get("GPUOPT_TORCH_TRACE")), torch.cuda.nvtx.range("measure"):
            for metric, spec in req["metrics"].items():
                if MEASURE.get(metric) != spec["unit"]:
                    raise SystemExit(f"this driver does not measure {metric} in {spec['unit']}")
                samples = []
                for _ in range(sampling["samples_per_call"][metric]):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter_ns()
                    output = impl.run(x)
                    torch.cuda.synchronize()
                    samples.append((time.perf_counter_ns() - t0) / 1e6)
                measurements[metric] = {"unit": spec["unit"], "samples": samples}
        error = 1e300
        if output is not None:
            error = float((output.double() - expected).abs().max().item())
        error = error if math.isfinite(error) else 1e300  # NaN or inf outputs fail the rule, as a number
        subjects.append(
            {
                "role": s["role"],
                "digest": s["digest"],
                "window": {"start_mono_ns": start, "end_mono_ns": time.monotonic_ns()},
                "correctness": {
                    "status": "passed" if error <= 1e-5 else "failed",
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
    try:
        subjects = measure(req)
    finally:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    write_atomically(Path(req["output_dir"]) / "result.json", result(req, subjects))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
