"""Lays out a tiny CPU workload (source tree, test set, fixture driver) and its readiness request."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def layout(base: Path, *, behavior: dict[str, Any] | None = None) -> dict[str, Path]:
    """Creates ``src/impl.py``, ``cases/{a,b}.json``, ``bench/driver.py`` and ``behavior/behavior.json``."""
    src = base / "src"
    src.mkdir(parents=True)
    (src / "impl.py").write_text("def run(case):\n    return sum(case['values'])\n")
    cases = base / "cases"
    cases.mkdir()
    for name, values in (("a", [1, 2, 3]), ("b", [4, 5, 6])):
        (cases / f"{name}.json").write_text(json.dumps({"values": values, "expected": sum(values)}))
    bench = base / "bench"
    bench.mkdir()
    shutil.copy(HERE / "fixture_driver.py", bench / "driver.py")
    behavior_dir = base / "behavior"
    behavior_dir.mkdir()
    set_behavior(behavior_dir, behavior or {"mode": "ok"})
    return {"src": src, "cases": cases, "driver": bench / "driver.py", "behavior": behavior_dir, "base": base}


def set_behavior(behavior_dir: Path, behavior: dict[str, Any]) -> None:
    (behavior_dir / "behavior.json").write_text(json.dumps(behavior))


def request(paths: dict[str, Path], root: Path, **overrides: Any) -> dict[str, Any]:
    """A valid optimization readiness request for the layout (CPU-only)."""
    req: dict[str, Any] = {
        "root": str(root),
        "mode": "optimization",
        "claim_layer": "workload",
        "original": {"kind": "source", "path": str(paths["src"])},
        "test_set": {"path": str(paths["cases"]), "case_ids": ["a", "b"]},
        "accuracy": {"rules": [{"metric": "max_abs_error", "op": "le", "value": 0.001}]},
        "metrics": {"step_time_ms": {"unit": "ms", "direction": "lower", "kind": "duration"}},
        "objective": {"primary": "step_time_ms", "minimum_effect_pct": 5},
        "driver": {
            "argv": [sys.executable, str(paths["driver"]), "--behavior-dir", str(paths["behavior"])],
            "env_inherit": ["PATH", "HOME", "LANG"],
        },
        "gpus": [],
        "statistics": {"seed": 7},
        "smoke": {"limits": {"command_timeout_s": 20, "cleanup_timeout_s": 10, "termination_grace_s": 0.5}},
    }
    req.update(overrides)
    return req
