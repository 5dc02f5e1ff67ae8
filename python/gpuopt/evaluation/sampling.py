"""The supervisor's side of resource sampling (spec §7): start the sampler before the GPU locks, run the
pre-run idle check, stop it after the last call, judge every call window under the frozen rules and label the
receipts. What the sampler saw stays in ``resources.jsonl``; what the rules made of it is in the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuopt.errors import GpuoptError
from gpuopt.evaluation import contamination as rules_
from gpuopt.evaluation import idle as idle_
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.sampler import RESOURCES, Sampler
from gpuopt.models.evaluation.invocation import TableRef, Warning
from gpuopt.models.evaluation.resources import IdleReport


@dataclass
class SamplingOutcome:
    """What the result's ``contamination`` facts are made of."""

    checked: bool
    sampler: str
    pre_idle: str
    source: str | None = None
    failure: str | None = None
    ticks: int = 0
    process_visibility: str = "not_applicable"
    per_call: dict[int, list[str]] = field(default_factory=dict)
    idle: IdleReport | None = None


def declared(spec: ExecutionSpec) -> bool:
    return spec.contamination is not None and spec.contamination.sampler != "disabled"


def not_checked(spec: ExecutionSpec) -> SamplingOutcome:
    sampler = "disabled" if spec.contamination is None else spec.contamination.sampler
    return SamplingOutcome(
        checked=False, sampler=sampler, pre_idle="not_required" if not spec.gpus else "not_checked"
    )


class Sampling:
    """One invocation's sampler, from before lock acquisition to after the last call."""

    def __init__(self, spec: ExecutionSpec, inv_dir: Path, events: Callable[..., None]) -> None:
        assert spec.contamination is not None
        self.spec = spec
        self.settings = spec.contamination
        self.inv_dir = inv_dir
        self.events = events
        self.sampler = Sampler(
            inv_dir / RESOURCES,
            kind=self.settings.sampler,
            gpus=spec.gpus,
            period_ms=self.settings.period_ms,
        )
        self.outcome = SamplingOutcome(
            checked=False,
            sampler=self.settings.sampler,
            pre_idle="not_required" if not spec.gpus else "not_checked",
        )

    def start(self) -> str | None:
        """Starts the sampler; the reason it could not start, else None."""
        try:
            header = self.sampler.start()
        except GpuoptError as exc:
            self.outcome.failure = f"{exc.code}: {exc.message}"
            return self.outcome.failure
        except OSError as exc:
            self.outcome.failure = f"resources.jsonl: {exc.strerror}"
            return self.outcome.failure
        self.outcome.source = header.source
        self.events(
            "sampler_started", source=header.source, version=header.version, period_ms=header.period_ms
        )
        return None

    def pre_idle(self, cancelled: Callable[[], bool]) -> IdleReport | None:
        """The idle check over this sampler's own ticks (``contamination.idle.window_s``); CPU-only Targets
        need none."""
        if not self.spec.gpus:
            return None
        since = time.monotonic_ns()
        deadline = time.monotonic() + self.settings.idle.window_s
        while time.monotonic() < deadline and not cancelled() and self.sampler.alive():
            time.sleep(min(0.05, max(deadline - time.monotonic(), 0.0)))
        rep = idle_.report(
            self.sampler.snapshot(since),
            self.spec.gpus,
            source=self.sampler.source,
            version=self.sampler.version,
            window_s=self.settings.idle.window_s,
            max_util_pct=self.settings.idle.max_util_pct,
            period_ms=self.settings.period_ms,
        )
        self.outcome.pre_idle = rep.status
        self.outcome.idle = rep
        self.events("idle_check", status=rep.status, detail=rep.detail)
        return rep

    @property
    def allow_busy(self) -> bool:
        return self.settings.idle.allow_busy

    def stop(self) -> None:
        self.sampler.stop()

    def finish(self, ex: Execution) -> None:
        """Stops the sampler (one last tick after the last call), judges each call window and labels its
        receipt; a sampler that died or never ran makes a valid measurement ``sampler_failed``."""
        self.sampler.stop()
        ticks = self.sampler.snapshot()
        out = self.outcome
        out.ticks = len(ticks)
        out.failure = out.failure or self.sampler.failure
        out.checked = out.failure is None
        out.process_visibility = rules_.process_visibility(ticks, self.spec.gpus)
        windows = {
            r.call_index: rules_.Window(r.window.start_mono_ns, r.window.end_mono_ns) for r in ex.receipts
        }
        judged = rules_.judge(
            ticks, windows, self.settings.rules, gpus=self.spec.gpus, period_ms=self.settings.period_ms
        )
        out.per_call = {k: j.rules for k, j in judged.items()}
        ex.receipts = [
            r.model_copy(update={"contamination": out.per_call.get(r.call_index, [])}) for r in ex.receipts
        ]
        ex.sampling = out
        if out.failure is not None:
            ex.warnings.append(Warning(code="sampler_failed", message=out.failure[:4000]))
            if ex.execution_status == "succeeded" and ex.validity == "valid" and not ex.correctness_failed:
                ex.stop("succeeded", "sampler_failed")

    def table(self) -> TableRef | None:
        path = self.inv_dir / RESOURCES
        if not path.exists():
            return None
        return TableRef(
            path=RESOURCES, sha256=jsonio.sha256_hex(path.read_bytes()), rows=len(self.sampler.snapshot())
        )


def facts_fields(out: SamplingOutcome) -> dict[str, Any]:
    return {
        "checked": out.checked,
        "sampler": out.sampler,
        "pre_idle": out.pre_idle,
        "process_visibility": out.process_visibility,
        "ticks": out.ticks,
    }
