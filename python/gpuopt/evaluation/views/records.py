"""The records of one root as views see them: from the ledger, each opened record verified by its hash."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio, records
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.experiment import Experiment
from gpuopt.models.evaluation.invocation import FrozenRequest, InvocationResult
from gpuopt.models.evaluation.store import LedgerLine
from gpuopt.models.evaluation.target import Target


@dataclass
class Root:
    """A root opened for reading."""

    store: Store

    @classmethod
    def open(cls, root: str | Path) -> Root:
        return cls(Store.open(root))

    @cached_property
    def lines(self) -> list[LedgerLine]:
        return self.store.ledger()

    @cached_property
    def latest(self) -> dict[tuple[str, str], LedgerLine]:
        """The newest ledger line per (kind, id)."""
        return {(line.kind, line.id): line for line in self.lines}

    @cached_property
    def target_and_ref(self) -> tuple[Target, RecordRef]:
        target, ref = targets.load(self.store)
        return targets.optimizable(target), ref

    @property
    def target(self) -> Target:
        return self.target_and_ref[0]

    @property
    def target_ref(self) -> RecordRef:
        return self.target_and_ref[1]

    def ids(self, kind: str) -> list[str]:
        seen: list[str] = []
        for line in self.lines:
            if line.kind == kind and line.id not in seen:
                seen.append(line.id)
        return seen

    def _verified(self, kind: str, rid: str) -> LedgerLine:
        line = self.latest.get((kind, rid))
        if line is None:
            raise InputError("record_not_found", f"no {kind} {rid} in the ledger of {self.store.root}")
        data = self.store.read_bytes(line.path)
        actual = jsonio.sha256_hex(data)
        if actual != line.sha256:
            raise InputError(
                "record_changed",
                f"{line.path} no longer matches its ledger line",
                path=line.path,
                expected=line.sha256,
                observed=actual,
            )
        return line

    def result(self, inv_id: str) -> tuple[InvocationResult, str] | None:
        if (("result", inv_id)) not in self.latest:
            return None
        line = self._verified("result", inv_id)
        found = records.read_result(self.store, inv_id)
        return None if found is None else (found[0], line.sha256)

    def request(self, inv_id: str) -> FrozenRequest:
        self._verified("invocation", inv_id)
        return records.read_request(self.store, inv_id)

    def experiment(self, exp_id: str) -> tuple[Experiment, str]:
        line = self._verified("experiment", exp_id)
        exp, sha = self.store.read_record(line.path, Experiment, what="experiment", sha256=line.sha256)
        return exp, sha

    def record_json(self, kind: str, rid: str) -> tuple[dict[str, Any], LedgerLine]:
        line = self._verified(kind, rid)
        value = jsonio.parse(self.store.read_bytes(line.path), max_bytes=jsonio.MAX_RECORD_BYTES)
        return value, line


def ref_text(rid: str, sha256: str) -> str:
    """How a fact cites its record: ``[id, sha256 <hex>]``."""
    return f"[{rid}, sha256 {sha256}]"


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f} %"


def ci(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return "—"
    return f"[{pct(low)}, {pct(high)}]"
