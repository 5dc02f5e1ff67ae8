"""Profile comparison: k captures per side (nsys exports, Kineto traces or ncu reports), one row per key.

    from gpuopt import profile
    result = profile.diff_files(["a1.sqlite", "a2.sqlite"], ["b1.sqlite", "b2.sqlite"], by="kernel")
    result.table          # polars: key, status, counts, totals, change, CI, p, q, flagged
    result.data.comparability, result.data.warnings

Per key and capture the value is the key's total time in that capture (0 when absent). The effect is the
mean over candidate captures minus the mean over baseline captures. With k ≥ 2 per side: a percentile
bootstrap CI over captures (paired when ``paired=True``: the lists are pairs in capture order), a t-test
p-value, and Benjamini-Hochberg q-values over keys; ``flagged`` keys have q ≤ ``fdr``. With k = 1 per side
there is no CI: "one capture per side: no uncertainty". The engine is Rust (``rust/src/profile``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import _native
from gpuopt._profile_sources import Capture, detect_kind, load
from gpuopt.errors import InputError
from gpuopt.models.profile import (
    NO_UNCERTAINTY,
    CaptureFacts,
    Comparability,
    ComparabilityFact,
    DiffCounts,
    DiffMethod,
    DiffWarning,
    Dimension,
    ProfileKind,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = ["Capture", "DiffResult", "diff", "diff_files", "load"]


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


def _work(
    baseline: Sequence[Capture], candidate: Sequence[Capture], long: pl.DataFrame, marker: str | None
) -> tuple[str | None, list[int], list[int]]:
    """The work key and its instances per capture: the --marker range, else the baseline's most
    frequent key."""
    import polars as pl

    if marker is not None:

        def count(c: Capture) -> int:
            hits = c.ranges.filter(pl.col("name") == marker)["count"]
            return int(hits.sum()) if hits.len() else 0

        return marker, [count(c) for c in baseline], [count(c) for c in candidate]
    totals = long.filter(pl.col("side") == "baseline").group_by("key").agg(pl.col("count").sum())
    if totals.is_empty():
        return None, [], []
    key = str(totals.sort(["count", "key"], descending=[True, False])["key"][0])

    def instances(c: Capture) -> int:
        hits = c.table.filter(pl.col("key") == key)["count"]
        return int(hits.sum()) if hits.len() else 0

    return key, [instances(c) for c in baseline], [instances(c) for c in candidate]


#: Capture options that identify one run rather than how it was captured (never compared): the session's
#: identity and duration, and the launched process's command line, working folder, user and pid (what ran is
#: the workload's identity, which a capture through the Target binds by variant; a per-call path in the
#: driver's arguments is not a capture setting).
_PER_RUN_OPTIONS = re.compile(
    r"(^|:)(PROFILING_SESSION_UUID|PROFILING_SESSION_ID|RUN_DURATION_MS|APPLICATION_PID|PID"
    r"|COMMAND|ARGUMENT_\d+|WORKING_DIR|USER_NAME)$"
)


def _settings(options: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in options.items() if not _PER_RUN_OPTIONS.search(k)}


def _option_differences(captures: Sequence[Capture]) -> str:
    """``NAME: [values]`` for each capture setting that is not the same in every capture."""
    names = sorted({k for c in captures for k in _settings(c.facts.options)})
    out = []
    for name in names:
        values = [c.facts.options.get(name) for c in captures]
        if len(set(values)) > 1:
            out.append(f"{name}: {values}")
    return "; ".join(out[:8]) + (f"; and {len(out) - 8} more" if len(out) > 8 else "")


def _fact(name: str, b: list[str | None], c: list[str | None]) -> ComparabilityFact:
    return ComparabilityFact(name=name, baseline=b, candidate=c, same=len(set(b) | set(c)) <= 1)


def _comparability(
    baseline: Sequence[Capture], candidate: Sequence[Capture], work: tuple[str | None, list[int], list[int]]
) -> tuple[Comparability, list[DiffWarning]]:
    def values(side: Sequence[Capture], get: str) -> list[str | None]:
        out: list[str | None] = []
        for c in side:
            value = getattr(c.facts, get)
            out.append(", ".join(value) or None if isinstance(value, list) else value)
        return out

    def options(side: Sequence[Capture]) -> list[str | None]:
        return [json.dumps(_settings(c.facts.options), sort_keys=True) for c in side]

    facts = [
        _fact("gpu", values(baseline, "gpus"), values(candidate, "gpus")),
        _fact("driver", values(baseline, "driver"), values(candidate, "driver")),
        _fact("tool", values(baseline, "tool"), values(candidate, "tool")),
        _fact("capture_options", options(baseline), options(candidate)),
    ]
    warnings = [
        DiffWarning(
            code=f"{f.name}_differs",
            message=f"{f.name} differs between captures (baseline, then candidate captures): "
            + (
                _option_differences([*baseline, *candidate])
                if f.name == "capture_options"
                else f"baseline {f.baseline}, candidate {f.candidate}"
            ),
        )
        for f in facts
        if not f.same
    ]
    key, wb, wc = work
    if key is not None and sorted(set(wb)) != sorted(set(wc)):
        warnings.append(
            DiffWarning(
                code="work_differs",
                message=f"the amount of work differs: {key!r} has {wb} instances per baseline capture and "
                f"{wc} per candidate capture; per-key totals compare different amounts of work",
            )
        )
    comparability = Comparability(facts=facts, work_key=key, work_baseline=wb, work_candidate=wc)
    return comparability, warnings


def diff(
    baseline: Sequence[Capture],
    candidate: Sequence[Capture],
    *,
    by: Dimension = "kernel",
    paired: bool = False,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
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
    long = pl.concat([_long("baseline", baseline), _long("candidate", candidate)])
    keys = long.select("key").unique().sort("key")
    if keys.is_empty():
        raise InputError(
            "profile_no_keys", f"no capture holds any '{by}' events", expected=f"{by} events in the captures"
        )
    matrices = {s: _matrix(long, keys, s, k, "total_ns") for s, k in (("baseline", kb), ("candidate", kc))}
    counts = {s: _matrix(long, keys, s, k, "count") for s, k in (("baseline", kb), ("candidate", kc))}
    options = {"paired": paired, "confidence": confidence, "resamples": resamples, "seed": seed}
    options |= {"fdr": fdr, "min_effect_pct": min_effect}
    native = _native.profile_diff_keys(
        keys["key"].to_list(),
        matrices["baseline"].to_numpy().astype("<f8", order="C").tobytes(),
        kb,
        matrices["candidate"].to_numpy().astype("<f8", order="C").tobytes(),
        kc,
        json.dumps(options).encode(),
    )
    from gpuopt._tables import to_polars

    stats = to_polars(native)
    b_count = counts["baseline"].mean_horizontal()
    c_count = counts["candidate"].mean_horizontal()
    b_present = counts["baseline"].sum_horizontal() > 0
    c_present = counts["candidate"].sum_horizontal() > 0
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
            baseline_per_instance_ns=pl.col("baseline_mean_ns") / pl.col("baseline_count"),
            candidate_per_instance_ns=pl.col("candidate_mean_ns") / pl.col("candidate_count"),
        )
        .with_columns(pl.col(["baseline_per_instance_ns", "candidate_per_instance_ns"]).fill_nan(None))
        .sort(pl.col("change_ns").abs(), "key", descending=[True, False])
    )
    table = table.select(
        "key",
        "status",
        "baseline_count",
        "candidate_count",
        "baseline_mean_ns",
        "candidate_mean_ns",
        "baseline_per_instance_ns",
        "candidate_per_instance_ns",
        *stats.columns[2:],
    )
    work = _work(baseline, candidate, long, marker)
    comparability, warnings = _comparability(baseline, candidate, work)
    facts_b = [_with_work(c.facts, i, work[1], marker) for i, c in enumerate(baseline)]
    facts_c = [_with_work(c.facts, i, work[2], marker) for i, c in enumerate(candidate)]
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
    method = DiffMethod(
        pairing=("paired" if paired else "unpaired") if uncertain else "none",
        uncertainty=(
            f"percentile bootstrap over captures ({'pairs resampled' if paired else 'each side resampled'}), "
            f"{'paired' if paired else 'Welch'} t-test p-values"
            if uncertain
            else NO_UNCERTAINTY
        ),
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        fdr=fdr,
        min_effect_pct=min_effect,
        multiple_comparisons=(
            f"Benjamini-Hochberg over {int(table['p_value'].is_not_null().sum())} tested keys: flagged keys "
            f"have q ≤ {fdr:g}, so about {100 * fdr:g} % of flagged keys may be false discoveries; "
            "per-key CIs are not adjusted"
            if uncertain
            else "none (no p-values without uncertainty)"
        ),
    )
    diff_counts = DiffCounts(
        keys=table.height,
        both=by_status.get("both", 0),
        new=by_status.get("new", 0),
        vanished=by_status.get("vanished", 0),
        tested=int(table["p_value"].is_not_null().sum()),
        flagged=int(table["flagged"].sum()),
    )
    return DiffResult(kind, by, facts_b, facts_c, comparability, method, diff_counts, warnings, table)


def _with_work(facts: CaptureFacts, i: int, work: list[int], marker: str | None) -> CaptureFacts:
    count = work[i] if i < len(work) else 0
    return facts.model_copy(update={"work_key_count": count, "marker_count": count if marker else None})


def _one_side_warning(table: pl.DataFrame) -> DiffWarning:
    import polars as pl

    new = table.filter(pl.col("status") == "new")["key"].to_list()
    gone = table.filter(pl.col("status") == "vanished")["key"].to_list()
    return DiffWarning(
        code="keys_one_side",
        message=f"{len(new)} keys only in the candidate (e.g. {new[:3]}), {len(gone)} only in the baseline "
        f"(e.g. {gone[:3]}); their change is their whole time",
    )


def diff_files(
    baseline: Sequence[str | Path],
    candidate: Sequence[str | Path],
    *,
    by: Dimension = "kernel",
    paired: bool = False,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
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
    # Each file is read by a native engine that releases the GIL: read them side by side.
    with ThreadPoolExecutor(max_workers=max(1, min(len(paths), len(os.sched_getaffinity(0))))) as pool:
        captures = list(pool.map(lambda p: load(p, by, nvtx=nvtx), paths))
    return diff(
        captures[: len(baseline)],
        captures[len(baseline) :],
        by=by,
        paired=paired,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        fdr=fdr,
        min_effect=min_effect,
        marker=marker,
    )
