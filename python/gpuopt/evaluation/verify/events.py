"""Each ledgered invocation's ``events.jsonl``: numbered and chained lines that parse as events, and, once
the result is ledgered, a ``result_published`` event holding the result's hash. The supervisor appends that
event just after the result's ledger line, so while it still runs the event may not be there yet; once it is
gone, the log ends with ``supervisor_finished``."""

from __future__ import annotations

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store import Store
from gpuopt.evaluation.verify.sequence import read_sequence
from gpuopt.models.evaluation.status import Event, SupervisorRecord
from gpuopt.models.evaluation.store import Defect, LedgerLine

MAX_EVENTS_BYTES = 1 << 30


def _invocations(lines: list[LedgerLine]) -> tuple[list[str], set[str]]:
    """The ledgered invocation ids (valid ones only: a line naming another is already a record defect)
    and those with a ledgered result."""
    ids: set[str] = set()
    for line in lines:
        if line.kind in ("invocation", "result"):
            try:
                _native.validate_id("invocation", line.id)
            except InputError:
                continue
            ids.add(line.id)
    return sorted(ids), {line.id for line in lines if line.kind == "result"}


def _supervisor_running(store: Store, inv: str) -> bool:
    try:
        data = store.read_bytes(f"invocations/{inv}/supervisor.json")
        record = jsonio.load(SupervisorRecord, data, what="supervisor.json")
    except InputError:
        return False
    return _native.proc_alive(record.pid, record.start_token)


def check_events(store: Store, lines: list[LedgerLine], sha256: dict[str, str]) -> tuple[int, list[Defect]]:
    """(event logs checked, defects); ``sha256`` holds the record files' hashes by path."""
    invocations, results = _invocations(lines)
    checked, defects = 0, []
    for inv in invocations:
        rel, result_rel = f"invocations/{inv}/events.jsonl", f"invocations/{inv}/result.json"
        if not store.exists(rel):
            if inv in results:
                expected = "the invocation's event log (the supervisor writes it before the result)"
                defects.append(Defect(code="events_missing", path=rel, expected=expected, record=result_rel))
            continue
        checked += 1
        try:
            data = store.read_bytes(rel, max_bytes=MAX_EVENTS_BYTES)
        except InputError as exc:
            expected = "a readable event log"
            defects.append(Defect(code="events_missing", path=rel, expected=expected, observed=exc.message))
            continue
        events = read_sequence(data, rel, Event, prefix="event")
        defects += events.defects
        result_sha = sha256.get(result_rel)
        if inv in results and result_sha is not None:
            published = [e.sha256 for _, e in events.lines if e.event == "result_published"]
            if result_sha not in published and (published or not _supervisor_running(store, inv)):
                defects.append(
                    Defect(
                        code="event_result_mismatch",
                        path=rel,
                        expected=f"a result_published event with sha256 {result_sha} (the result's hash)",
                        observed=", ".join(str(s) for s in published) or "no result_published event",
                        record=result_rel,
                    )
                )
            elif published and not _finished(events.lines) and not _supervisor_running(store, inv):
                defects.append(_unfinished(rel, events.lines, result_rel))
    return checked, defects


def _finished(lines: list[tuple[int, Event]]) -> bool:
    return bool(lines) and lines[-1][1].event == "supervisor_finished"


def _unfinished(rel: str, lines: list[tuple[int, Event]], result_rel: str) -> Defect:
    """The log of a published result whose supervisor is gone ends without ``supervisor_finished``: its
    last line was removed, or the supervisor was killed in the moment between publishing and finishing
    (as a log without ``result_published`` is, the same moment's other side)."""
    return Defect(
        code="events_unfinished",
        path=rel,
        expected="the log of a published result ends with supervisor_finished (the supervisor's last line)",
        observed=f"it ends with {lines[-1][1].event} (line {lines[-1][0]})" if lines else "no event",
        record=result_rel,
    )
