"""Sequenced JSON-lines files (the ledger, an invocation's ``events.jsonl``): line ``n`` has ``seq`` ``n``
and, from line 2 on, ``prev_sha256``, the SHA-256 of line ``n - 1``'s bytes. A torn last line (a crash
mid-append) is no defect: readers ignore it and the next writer cuts it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel

from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.models.evaluation.store import Defect

L = TypeVar("L", bound=BaseModel)


@dataclass
class Sequence(Generic[L]):
    """The lines that parse, each with its line number (1-based); what is wrong with the others."""

    lines: list[tuple[int, L]] = field(default_factory=list)
    defects: list[Defect] = field(default_factory=list)
    torn_tail: bool = False


def read_sequence(
    data: bytes, rel: str, model: type[L], *, prefix: Literal["ledger", "event"]
) -> Sequence[L]:
    """Parses every complete line against ``model`` and checks numbering and chain. Each ``seq`` follows the
    one before (a removed or copied line is reported once, not on every later line). Lines written before the
    chain existed carry no ``prev_sha256``; once a line carries one, every later line must."""
    parts = data.split(b"\n")
    out: Sequence[L] = Sequence(torn_tail=parts[-1] != b"")
    first_seen: dict[bytes, int] = {}
    previous: bytes | None = None
    last_seq = 0
    chained = False

    def defect(code: str, number: int, expected: str, observed: str | None) -> None:
        out.defects.append(
            Defect.model_validate(
                {
                    "code": f"{prefix}_{code}",
                    "path": rel,
                    "expected": f"line {number}: {expected}",
                    "observed": observed,
                }
            )
        )

    for number, raw in enumerate(parts[:-1], start=1):
        earlier = first_seen.get(raw)
        if earlier is not None:  # an extra line: the chain and the numbering read through it
            defect("line_duplicated", number, "a line of its own", f"a copy of line {earlier}")
            continue
        previous_raw, previous = previous, raw
        first_seen[raw] = number
        try:
            line = jsonio.load(model, raw, what=f"{rel} line {number}", max_bytes=jsonio.MAX_RECORD_BYTES)
        except InputError as exc:
            defect("line_invalid", number, f"a valid {model.__name__} line", exc.message)
            last_seq += 1
            continue
        seq, prev = getattr(line, "seq", 0), getattr(line, "prev_sha256", None)
        if seq != last_seq + 1:
            defect("seq_invalid", number, f"seq {last_seq + 1}", f"seq {seq}")
        last_seq = seq
        want = None if previous_raw is None else jsonio.sha256_hex(previous_raw)
        chained = chained or prev is not None
        if (chained or number == 1) and prev != want:
            shown = (
                "no prev_sha256" if want is None else f"prev_sha256 {want} (the hash of line {number - 1})"
            )
            defect("chain_broken", number, shown, prev or "no prev_sha256")
        out.lines.append((number, line))
    return out
