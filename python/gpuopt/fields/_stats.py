"""Column definitions of the statistics tables (``gpuopt stats compare|noise``, ``gpuopt profile diff``).

Sources: ``rust/src/stats/tables.rs``, ``rust/src/stats/effect.rs``, ``references/stats.md`` and
``references/profile-diff.md``.
"""

from __future__ import annotations

_PAIRS = {
    "pair_index": "Position of the pair in the input (0-based)",
    "key": "The pair's key (--key-column); null without one",
    "case_id": "The pair's case (--case-column); null without one",
    "order": "AB or BA: which side ran first in the pair; null when not recorded",
    "valid": "False when a side's value is missing, not positive or not finite (left out of the statistics)",
    "baseline_value": "The baseline's (stats noise: the first copy's) value of the pair "
    "(one call; several samples reduced by --within-call)",
    "candidate_value": "The candidate's (stats noise: the second copy's) value of the pair",
    "baseline_samples": "Samples the baseline call held",
    "candidate_samples": "Samples the candidate call held",
    "effect_log": "ln(baseline / candidate) for lower-is-better (ln(candidate / baseline) for higher): "
    "positive = improvement; null on the arithmetic scale",
    "effect_pct": "The effect as a percentage improvement: 100 x (exp(effect_log) - 1)",
    "change_pct": "The candidate's raw change: 100 x (candidate / baseline - 1); negative = lower",
}

_VALUES = {
    "role": "baseline or candidate",
    "index": "Position of the call on its side (0-based)",
    "value": "The call's value (several samples reduced by --within-call)",
    "samples": "Samples the call held",
    "log_value": "ln(value)",
}


_KEYS = {
    "key": "The normalised key: kernel name (or [CUDA graph G exec E] in a graph-level nsys trace), NVTX "
    "range or op (see references/profile-diff.md)",
    "status": "both, new (candidate only) or vanished (baseline only)",
    "baseline_count": "Mean instances of the key per baseline capture",
    "candidate_count": "Mean instances of the key per candidate capture",
    "baseline_mean_ns": "Mean over baseline captures of the key's time per capture, or per step when "
    "method.values says so (ns; 0 where absent)",
    "candidate_mean_ns": "Mean over candidate captures of the key's time (ns; as baseline_mean_ns)",
    "baseline_per_instance_ns": "Baseline total time / instances (ns)",
    "candidate_per_instance_ns": "Candidate total time / instances (ns)",
    "change_ns": "candidate_mean_ns - baseline_mean_ns (ns)",
    "change_pct": "100 x (candidate_mean_ns / baseline_mean_ns - 1); null when the baseline mean is 0",
    "ci_low_ns": "Lower end of the t interval of change_ns (Welch, or paired) at ci_level (ns; k >= 2 "
    "per side)",
    "ci_high_ns": "Upper end of that interval (ns)",
    "ci_low_pct": "Lower end of the interval of change_pct (Fieller's, same t and level; null when the "
    "baseline mean is not distinguishable from 0)",
    "ci_high_pct": "Upper end of the interval of change_pct",
    "ci_level": "Two-sided level of the row's intervals: 1 - max(R, 1) x fdr / m (false-coverage-rate "
    "adjusted; R flagged of m tested keys), so flagged rows exclude 0 and others do not",
    "p_value": "Welch's t test on per-capture values (paired t test with --paired)",
    "q_value": "Benjamini-Hochberg adjusted p-value over every tested key",
    "flagged": "q_value <= --fdr and |change_pct| >= --min-effect",
}

TABLES: dict[str, dict[str, str]] = {
    "stats.pairs": _PAIRS,
    "stats.values": _VALUES,
    "profile.keys": _KEYS,
}
