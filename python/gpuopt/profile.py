"""Profile comparison: k captures per side (nsys exports, Kineto traces or ncu reports), one row per key.

    from gpuopt import profile
    result = profile.diff_files(["a1.sqlite", "a2.sqlite"], ["b1.sqlite", "b2.sqlite"], by="kernel")
    result.table          # polars: key, status, counts, totals, change, CI, p, q, flagged
    result.data.comparability, result.data.warnings

Per key and capture the value is the key's total time in that capture (0 when absent), or its time per step
when the captures hold different numbers of steps. The effect is the mean over candidate captures minus the
mean over baseline captures. With k ≥ 2 per side: a t-test p-value (Welch, or paired when ``paired=True``:
the lists are pairs in capture order), Benjamini-Hochberg q-values over keys (``flagged`` keys have
q ≤ ``fdr``), and t intervals at the level the flags imply (false-coverage-rate adjusted), so a flagged key's
interval excludes 0 and an unflagged key's does not. ``result.totals`` compares the whole kernel time (and
per step). With k = 1 per side there is no CI: "one capture per side: no uncertainty". The engine is Rust
(``rust/src/profile``); references/profile-diff.md has the method and its measured coverage.

:func:`diff_document` answers what ``gpuopt profile diff`` prints (a :class:`gpuopt.answer.Answer`:
``.data`` the ``ProfileDiffData`` document, ``.table`` every key); ``cap:`` references to capture records
and ``--cite`` are :func:`gpuopt.evaluation.capture.diff.diff_document`'s, which builds on it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gpuopt import _native, _profile_work
from gpuopt._columns import Column
from gpuopt._profile_sources import Capture, detect_kind, load
from gpuopt.errors import InputError
from gpuopt.models.profile import (
    NO_UNCERTAINTY,
    CaptureFacts,
    Comparability,
    DiffCounts,
    DiffMethod,
    DiffTotal,
    DiffWarning,
    Dimension,
    ProfileKind,
    Work,
)

if TYPE_CHECKING:
    import polars as pl

    from gpuopt.answer import Answer
    from gpuopt.models.profile import ProfileDiffData

__all__ = ["Capture", "DiffResult", "diff", "diff_data", "diff_document", "diff_files", "load"]


KEY_COLUMNS: tuple[Column, ...] = (
    Column(
        "key",
        "String",
        "none",
        "The normalised key: kernel name (or [CUDA graph G exec E] in a graph-level nsys trace), NVTX"
        " range or op (see references/profile-diff.md)",
    ),
    Column("status", "String", "none", "both, new (candidate only) or vanished (baseline only)"),
    Column("baseline_count", "Float64", "count", "Mean instances of the key per baseline capture"),
    Column("candidate_count", "Float64", "count", "Mean instances of the key per candidate capture"),
    Column(
        "baseline_mean_ns",
        "Float64",
        "ns",
        "Mean over baseline captures of the key's time per capture, or per step when method.values says"
        " so (ns; 0 where absent)",
    ),
    Column(
        "candidate_mean_ns",
        "Float64",
        "ns",
        "Mean over candidate captures of the key's time (ns; as baseline_mean_ns)",
    ),
    Column("baseline_per_instance_ns", "Float64", "ns", "Baseline total time / instances (ns)"),
    Column("candidate_per_instance_ns", "Float64", "ns", "Candidate total time / instances (ns)"),
    Column("change_ns", "Float64", "ns", "candidate_mean_ns - baseline_mean_ns (ns)"),
    Column(
        "change_pct",
        "Float64",
        "pct",
        "100 x (candidate_mean_ns / baseline_mean_ns - 1); null when the baseline mean is 0",
    ),
    Column(
        "ci_low_ns",
        "Float64",
        "ns",
        "Lower end of the t interval of change_ns (Welch, or paired) at ci_level (ns; k >= 2 per side)",
    ),
    Column("ci_high_ns", "Float64", "ns", "Upper end of that interval (ns)"),
    Column(
        "ci_low_pct",
        "Float64",
        "pct",
        "Lower end of the interval of change_pct (Fieller's, same t and level; null when the baseline mean"
        " is not distinguishable from 0)",
    ),
    Column("ci_high_pct", "Float64", "pct", "Upper end of the interval of change_pct"),
    Column(
        "ci_level",
        "Float64",
        "ratio",
        "Two-sided level of the row's intervals: 1 - max(R, 1) x fdr / m (false-coverage-rate adjusted;"
        " R flagged of m tested keys), so flagged rows exclude 0 and others do not",
    ),
    Column(
        "p_value", "Float64", "ratio", "Welch's t test on per-capture values (paired t test with --paired)"
    ),
    Column("q_value", "Float64", "ratio", "Benjamini-Hochberg adjusted p-value over every tested key"),
    Column("flagged", "Boolean", "none", "q_value <= --fdr and |change_pct| >= --min-effect"),
)
"""The columns of ``profile.keys`` (``gpuopt profile diff``), in order: declared here, where the table is
built (the statistics columns come from ``_native.profile_diff_keys``)."""


@dataclass(frozen=True)
class DiffResult:
    """The comparison: its documents and one row per key (sorted by |change_ns|, largest first)."""

    kind: ProfileKind
    by: Dimension
    baseline: list[CaptureFacts]
    candidate: list[CaptureFacts]
    comparability: Comparability
    method: DiffMethod
    counts: DiffCounts
    totals: list[DiffTotal]
    warnings: list[DiffWarning]
    table: pl.DataFrame


def _check_kinds(captures: Sequence[Capture]) -> ProfileKind:
    kinds = {c.facts.kind for c in captures}
    if len(kinds) != 1:
        listing = ", ".join(f"{c.facts.path} ({c.facts.kind})" for c in captures)
        raise InputError(
            "profile_kinds_mixed",
            f"captures of different kinds cannot be compared: {listing}",
            expected="every capture of one kind (nsys, torch or ncu)",
            observed=", ".join(sorted(kinds)),
        )
    return captures[0].facts.kind


def _check_gpus(baseline: Sequence[Capture], candidate: Sequence[Capture]) -> None:
    def models(side: Sequence[Capture]) -> set[str]:
        return {g for c in side for g in c.facts.gpus}

    b, c = models(baseline), models(candidate)
    if b and c and b != c:
        raise InputError(
            "profile_gpus_differ",
            "baseline and candidate captures were made on different GPU models",
            expected=", ".join(sorted(b)),
            observed=", ".join(sorted(c)),
        )


def _long(side: str, captures: Sequence[Capture]) -> pl.DataFrame:
    import polars as pl

    return pl.concat(
        [c.table.with_columns(side=pl.lit(side), capture=pl.lit(i)) for i, c in enumerate(captures)]
    )


def _matrix(long: pl.DataFrame, keys: pl.DataFrame, side: str, k: int, value: str) -> pl.DataFrame:
    """keys x captures of one side (0 where a key is absent), columns c0..c{k-1} in capture order."""
    import polars as pl

    wide = long.filter(pl.col("side") == side).pivot(on="capture", index="key", values=value)
    names = [str(i) for i in range(k)]
    for name in names:
        if name not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Float64).alias(name))
    return keys.join(wide, on="key", how="left").select(pl.col(names).cast(pl.Float64).fill_null(0.0))


@dataclass(frozen=True)
class _Rounding:
    """What the engine needs to floor a side's variance by the timer's rounding: instances per key and
    capture (keys x captures, as the values), each capture's timer resolution (ns; 0: none known) and the
    factor its values were scaled by (1 / steps per step, else 1)."""

    instances: pl.DataFrame
    q_ns: list[float]
    scale: list[float]


def _resolutions(side: Sequence[Capture]) -> list[float]:
    return [float(c.facts.timer_resolution_ns or 0) for c in side]


@dataclass(frozen=True)
class _Opts:
    paired: bool
    fdr: float
    min_effect: float


def _native_rows(
    keys: list[str],
    b: pl.DataFrame,
    c: pl.DataFrame,
    opts: _Opts,
    family: Literal["keys", "each"],
    rounding: tuple[_Rounding, _Rounding] | None = None,
) -> pl.DataFrame:
    """The engine's per-row statistics (rust/src/profile/diff.rs) of keys x captures matrices; with
    ``rounding`` (baseline, candidate) the t test's variance is floored by the timer's rounding."""
    from gpuopt._tables import to_polars

    def raw(frame: pl.DataFrame) -> bytes:
        return frame.to_numpy().astype("<f8", order="C").tobytes()

    options = {"paired": opts.paired, "fdr": opts.fdr, "min_effect_pct": opts.min_effect, "family": family}
    extra: dict[str, Any] = {}
    if rounding is not None:
        rb, rc = rounding
        extra = {
            "baseline_instances": raw(rb.instances),
            "candidate_instances": raw(rc.instances),
            "baseline_q_ns": rb.q_ns,
            "candidate_q_ns": rc.q_ns,
            "baseline_scale": rb.scale,
            "candidate_scale": rc.scale,
        }
    return to_polars(
        _native.profile_diff_keys(
            keys, raw(b), b.width, raw(c), c.width, json.dumps(options).encode(), **extra
        )
    )


def _totals(
    baseline: Sequence[Capture], candidate: Sequence[Capture], by: Dimension, work: Work, opts: _Opts
) -> list[DiffTotal]:
    """Whole kernel time per capture (copy time for memcpy keys, which are disjoint and sum), and per step
    when every capture's steps are known, each compared as one quantity at level 1 - fdr."""
    import polars as pl

    def whole(c: Capture) -> float:
        return float(c.table["total_ns"].sum()) if by == "memcpy" else float(c.facts.kernel_time_ns)

    def instances(c: Capture) -> float:
        return float(c.table["count"].sum()) if by == "memcpy" else float(c.facts.kernels)

    name = "copy time" if by == "memcpy" else "kernel time"
    b = [whole(c) for c in baseline]
    c = [whole(x) for x in candidate]
    rows = [(name, b, c)]
    # Rounding floor of the whole time: every instance it sums; the per-step row gets none (the events
    # inside the steps are not counted here, and a step's time sums hundreds of them: its spread is
    # far above the floor).
    counts_b, counts_c = [[instances(x) for x in baseline]], [[instances(x) for x in candidate]]
    steps_b, steps_c = work.steps_baseline, work.steps_candidate
    if work.source != "unknown" and work.same_unit and all(n for n in [*steps_b, *steps_c]):
        # Per step: the GPU time launched inside the step ranges, or of the detected iterations (work
        # outside them, a prefill or the set-up, is not a step's), over the steps.
        wanted = work.step_ranges

        def inside(x: Capture, n: int | None) -> float:
            if work.source == "detected" and x.detect is not None:
                return x.detect().gpu_ns / float(n or 1)
            hits = x.ranges.filter(pl.col("name").is_in(wanted))["gpu_ns"].sum()
            return float(hits) / float(n or 1)

        per = [inside(x, n) for x, n in zip(baseline, steps_b, strict=True)]
        per_c = [inside(x, n) for x, n in zip(candidate, steps_c, strict=True)]
        label = (
            "GPU time of a detected iteration" if work.source == "detected" else "GPU time launched in a step"
        )
        rows.append((label, per, per_c))
        counts_b.append([0.0] * len(baseline))
        counts_c.append([0.0] * len(candidate))
    rounding = (
        _Rounding(pl.DataFrame(counts_b, orient="row"), _resolutions(baseline), [1.0] * len(baseline)),
        _Rounding(pl.DataFrame(counts_c, orient="row"), _resolutions(candidate), [1.0] * len(candidate)),
    )
    stats = _native_rows(
        [r[0] for r in rows],
        pl.DataFrame([r[1] for r in rows], orient="row"),
        pl.DataFrame([r[2] for r in rows], orient="row"),
        opts,
        "each",
        rounding,
    )
    out = []
    for (label, vb, vc), row in zip(rows, stats.iter_rows(named=True), strict=True):
        out.append(
            DiffTotal(
                name=label,
                baseline=vb,
                candidate=vc,
                **{k: row[k] for k in DiffTotal.model_fields if k in row},
            )
        )
    return out


def diff(
    baseline: Sequence[Capture],
    candidate: Sequence[Capture],
    *,
    by: Dimension = "kernel",
    paired: bool = False,
    fdr: float = 0.05,
    min_effect: float = 0.0,
    marker: str | None = None,
) -> DiffResult:
    """Compares k ≥ 1 captures per side key by key (see the module docstring)."""
    import polars as pl

    if not baseline or not candidate:
        raise InputError("profile_captures_missing", "each side needs at least one capture")
    kind = _check_kinds([*baseline, *candidate])
    _check_gpus(baseline, candidate)
    kb, kc = len(baseline), len(candidate)
    work = _profile_work.work(baseline, candidate, marker)
    long = pl.concat([_long("baseline", baseline), _long("candidate", candidate)])
    keys = long.select("key").unique().sort("key")
    if keys.is_empty():
        raise InputError(
            "profile_no_keys", f"no capture holds any '{by}' events", expected=f"{by} events in the captures"
        )
    matrices = {s: _matrix(long, keys, s, k, "total_ns") for s, k in (("baseline", kb), ("candidate", kc))}
    counts = {s: _matrix(long, keys, s, k, "count") for s, k in (("baseline", kb), ("candidate", kc))}
    scales = {"baseline": [1.0] * kb, "candidate": [1.0] * kc}
    if work.per_step:
        for side, steps in (("baseline", work.steps_baseline), ("candidate", work.steps_candidate)):
            scales[side] = [1.0 / float(n or 1) for n in steps]
            m = matrices[side]
            matrices[side] = m.with_columns(
                [pl.col(name) / float(n or 1) for name, n in zip(m.columns, steps, strict=True)]
            )
    opts = _Opts(paired=paired, fdr=fdr, min_effect=min_effect)
    rounding = (
        _Rounding(counts["baseline"], _resolutions(baseline), scales["baseline"]),
        _Rounding(counts["candidate"], _resolutions(candidate), scales["candidate"]),
    )
    stats = _native_rows(
        keys["key"].to_list(), matrices["baseline"], matrices["candidate"], opts, "keys", rounding
    )
    b_count = counts["baseline"].mean_horizontal()
    c_count = counts["candidate"].mean_horizontal()
    b_present = counts["baseline"].sum_horizontal() > 0
    c_present = counts["candidate"].sum_horizontal() > 0
    b_total = _matrix(long, keys, "baseline", kb, "total_ns").sum_horizontal()
    c_total = _matrix(long, keys, "candidate", kc, "total_ns").sum_horizontal()
    table = (
        pl.DataFrame({"key": keys["key"], "baseline_count": b_count, "candidate_count": c_count})
        .with_columns(
            status=pl.when(b_present & c_present)
            .then(pl.lit("both"))
            .when(c_present)
            .then(pl.lit("new"))
            .otherwise(pl.lit("vanished"))
        )
        .hstack(stats)
        .with_columns(
            baseline_per_instance_ns=b_total / counts["baseline"].sum_horizontal(),
            candidate_per_instance_ns=c_total / counts["candidate"].sum_horizontal(),
        )
        .with_columns(pl.col(["baseline_per_instance_ns", "candidate_per_instance_ns"]).fill_nan(None))
        .sort(pl.col("change_ns").abs(), "key", descending=[True, False])
    )
    table = table.select(c.name for c in KEY_COLUMNS)
    comparability, warnings = _profile_work.comparability(baseline, candidate, work)
    facts_b = [_with_steps(c.facts, n) for c, n in zip(baseline, work.steps_baseline, strict=True)]
    facts_c = [_with_steps(c.facts, n) for c, n in zip(candidate, work.steps_candidate, strict=True)]
    status = table["status"].value_counts()
    by_status = dict(zip(status["status"].to_list(), status["count"].to_list(), strict=True))
    if by_status.get("new", 0) or by_status.get("vanished", 0):
        warnings.append(_one_side_warning(table))
    uncertain = kb >= 2 and kc >= 2
    if not uncertain:
        warnings.append(
            DiffWarning(
                code="no_uncertainty",
                message=f"{NO_UNCERTAINTY} ({kb} baseline, {kc} candidate captures; a CI needs ≥ 2 a side)",
            )
        )
    tested = int(table["p_value"].is_not_null().sum())
    flagged = int(table["flagged"].sum())
    levels = table["ci_level"].drop_nulls()
    method = DiffMethod(
        pairing=("paired" if paired else "unpaired") if uncertain else "none",
        uncertainty=(
            f"{'paired' if paired else 'Welch'} t test of per-capture values, its variance at least the "
            "timer's rounding (instances·q²/6 a value, q each capture's timer_resolution_ns); t intervals "
            "at the level the flags imply, percent intervals by Fieller's method"
            if uncertain
            else NO_UNCERTAINTY
        ),
        values="time per step (step counts differ)" if work.per_step else "total time per capture",
        fdr=fdr,
        key_ci_level=float(levels[0]) if levels.len() else None,
        min_effect_pct=min_effect,
        multiple_comparisons=(
            f"Benjamini-Hochberg over {tested} tested keys: flagged keys have q ≤ {fdr:g}, so about "
            f"{100 * fdr:g} % of flagged keys may be false discoveries; every key's interval is at level "
            f"1 - max(R, 1)·{fdr:g}/m = {100 * float(levels[0]):.4g} % (R = {flagged} flagged, m = {tested} "
            "tested: false-coverage-rate adjusted), so flagged keys' intervals exclude 0 and the others' "
            "do not"
            if uncertain and levels.len()
            else "none (no p-values without uncertainty)"
        ),
    )
    diff_counts = DiffCounts(
        keys=table.height,
        both=by_status.get("both", 0),
        new=by_status.get("new", 0),
        vanished=by_status.get("vanished", 0),
        tested=tested,
        flagged=flagged,
    )
    totals = _totals(baseline, candidate, by, work, opts)
    return DiffResult(kind, by, facts_b, facts_c, comparability, method, diff_counts, totals, warnings, table)


def _with_steps(facts: CaptureFacts, steps: int | None) -> CaptureFacts:
    per_step = facts.kernels / steps if steps else None
    return facts.model_copy(update={"steps": steps, "kernels_per_step": per_step})


def _one_side_warning(table: pl.DataFrame) -> DiffWarning:
    import polars as pl

    def short(name: str) -> str:
        return name if len(name) <= 72 else f"{name[:40]}…{name[-31:]}"

    new = [short(k) for k in table.filter(pl.col("status") == "new")["key"].to_list()]
    gone = [short(k) for k in table.filter(pl.col("status") == "vanished")["key"].to_list()]
    return DiffWarning(
        code="keys_one_side",
        message=f"{len(new)} keys only in the candidate (e.g. {new[:3]}), {len(gone)} only in the baseline "
        f"(e.g. {gone[:3]}); their change is their whole time",
    )


def _content(paths: Sequence[Path]) -> list[str]:
    """A digest of each capture's bytes: the file's BLAKE3 (gpuopt's identity, cached), or for a folder of
    rank traces the sorted (name, digest) of its files."""
    from gpuopt.provenance import file_identity

    out = []
    for p in paths:
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file())
            out.append(json.dumps([(f.relative_to(p).as_posix(), file_identity(f).blake3) for f in files]))
        else:
            out.append(file_identity(p).blake3)
    return out


def _refuse_same_content(baseline: Sequence[Path], candidate: Sequence[Path]) -> None:
    """The same file twice, or byte-identical copies, within or across the sides: a typed error naming
    them."""
    labelled = [("baseline", p) for p in baseline] + [("candidate", p) for p in candidate]
    seen: dict[str, tuple[str, Path]] = {}
    for (side, path), digest in zip(labelled, _content([p for _, p in labelled]), strict=True):
        if digest in seen:
            first_side, first = seen[digest]
            same = first.resolve() == path.resolve()
            raise InputError(
                "profile_captures_duplicate",
                f"{first} ({first_side}) and {path} ({side}) are "
                + ("the same file" if same else "byte-identical copies")
                + ": a capture compared with itself has no spread, and its p-values and intervals would "
                "claim a certainty the data do not have",
                path=str(path),
                expected="distinct captures (each capture of its own run)",
                observed=f"{first} = {path}",
            )
        seen[digest] = (side, path)


def diff_files(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    by: Dimension = "kernel",
    paired: bool = False,
    fdr: float = 0.05,
    min_effect: float = 0.0,
    marker: str | None = None,
    nvtx: str | None = None,
) -> DiffResult:
    """Reads capture files (all of one kind) and compares them; see :func:`diff`. ``nvtx`` restricts
    nsys captures to the work launched inside that range."""
    paths = [Path(p) for p in (*baseline, *candidate)]
    kinds = {p: detect_kind(p) for p in paths}
    if len(set(kinds.values())) > 1:
        listing = ", ".join(f"{p} ({k})" for p, k in kinds.items())
        raise InputError(
            "profile_kinds_mixed",
            f"captures of different kinds cannot be compared: {listing}",
            expected="every capture of one kind (nsys, torch or ncu)",
            observed=", ".join(sorted(set(kinds.values()))),
        )
    _refuse_same_content([Path(p) for p in baseline], [Path(p) for p in candidate])
    # Each file is read by a native engine that releases the GIL: read them side by side.
    with ThreadPoolExecutor(max_workers=max(1, min(len(paths), len(os.sched_getaffinity(0))))) as pool:
        captures = list(pool.map(lambda p: load(p, by, nvtx=nvtx), paths))
    return diff(
        captures[: len(baseline)],
        captures[len(baseline) :],
        by=by,
        paired=paired,
        fdr=fdr,
        min_effect=min_effect,
        marker=marker,
    )


def diff_data(
    result: DiffResult, *, limit: int = 50, sort: str | None = None
) -> tuple[ProfileDiffData, pl.DataFrame]:
    """``result`` as the ``gpuopt profile diff`` document, its key table in ``sort`` order (``COLUMN``
    largest first, ``COLUMN:asc``; default: largest ``|change_ns|`` first) with the first ``limit`` rows
    (0: all); and that whole table."""
    from gpuopt._tables import sorted_by, table_data
    from gpuopt.models.profile import ProfileDiffData

    table = sorted_by(result.table, sort)
    data = ProfileDiffData(
        kind=result.kind,
        by=result.by,
        k_baseline=len(result.baseline),
        k_candidate=len(result.candidate),
        baseline=result.baseline,
        candidate=result.candidate,
        comparability=result.comparability,
        method=result.method,
        counts=result.counts,
        totals=result.totals,
        warnings=result.warnings,
        table=table_data("keys", table, limit),
    )
    return data, table


def diff_document(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    by: Dimension = "kernel",
    paired: bool = False,
    fdr: float = 0.05,
    min_effect: float = 0.0,
    marker: str | None = None,
    nvtx: str | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[ProfileDiffData]:
    """``gpuopt profile diff`` of capture files: :func:`diff_files` as its document (see :func:`diff_data`),
    with the identity of every capture file read."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import file_identity

    result = diff_files(
        baseline, candidate, by=by, paired=paired, fdr=fdr, min_effect=min_effect, marker=marker, nvtx=nvtx
    )
    data, table = diff_data(result, limit=limit, sort=sort)
    inputs = [file_identity(p) for p in map(Path, (*baseline, *candidate)) if p.is_file()]
    return Answer(data, inputs, tables={"keys": table})
