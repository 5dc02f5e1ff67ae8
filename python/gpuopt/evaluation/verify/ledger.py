"""The ledger (``ledger/records.jsonl``) as verify reads it: every line parsed, numbered and chained, and one
line per publication (a create-once record is listed once; the Champion pointer once per version)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuopt.evaluation.store import LEDGER, Store
from gpuopt.evaluation.verify.sequence import read_sequence
from gpuopt.models.evaluation.store import Defect, LedgerLine

POINTER = "champion/current.json"
"""The one record that is replaced (compare-and-swap): each version gets its own line."""
MAX_LEDGER_BYTES = 1 << 34


@dataclass
class Ledger:
    lines: list[LedgerLine]
    """Lines that parse and are not copies, in order."""
    count: int
    torn_tail: bool
    defects: list[Defect]


def read_ledger(store: Store, *, has_records: bool) -> Ledger:
    if not store.exists(LEDGER):
        missing = Defect(
            code="ledger_missing",
            path=LEDGER,
            expected="one line per published record (gpuopt store reindex rebuilds it from the records)",
        )
        return Ledger([], 0, False, [missing] if has_records else [])
    data = store.read_bytes(LEDGER, max_bytes=MAX_LEDGER_BYTES)
    seq = read_sequence(data, LEDGER, LedgerLine, prefix="ledger")
    defects = seq.defects
    listed: dict[tuple[str, str], int] = {}
    for number, line in seq.lines:
        key = (line.path, line.sha256 if line.path == POINTER else "")
        earlier = listed.setdefault(key, number)
        if earlier != number:
            defects.append(
                Defect(
                    code="ledger_line_duplicated",
                    path=LEDGER,
                    expected=f"line {number}: one line per publication of {line.path}",
                    observed=f"line {earlier} already lists it",
                )
            )
    return Ledger([line for _, line in seq.lines], len(data.split(b"\n")) - 1, seq.torn_tail, defects)
