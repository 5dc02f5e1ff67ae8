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
    "key": "The normalised key: kernel name, NVTX range or op (see references/profile-diff.md)",
    "status": "both, new (candidate only) or vanished (baseline only)",
    "baseline_count": "Mean instances of the key per baseline capture",
    "candidate_count": "Mean instances of the key per candidate capture",
    "baseline_mean_ns": "Mean over baseline captures of the key's total time (ns; 0 where absent)",
    "candidate_mean_ns": "Mean over candidate captures of the key's total time (ns)",
    "baseline_per_instance_ns": "baseline_mean_ns / baseline_count (ns)",
    "candidate_per_instance_ns": "candidate_mean_ns / candidate_count (ns)",
    "change_ns": "candidate_mean_ns - baseline_mean_ns (ns)",
    "change_pct": "100 x (candidate_mean_ns / baseline_mean_ns - 1); null when the baseline mean is 0",
    "ci_low_ns": "Lower end of the percentile-bootstrap CI of change_ns over captures (ns; k >= 2 per side)",
    "ci_high_ns": "Upper end of that CI (ns)",
    "ci_low_pct": "Lower end of the CI of change_pct (only when every baseline capture holds the key)",
    "ci_high_pct": "Upper end of the CI of change_pct",
    "p_value": "Welch's t test on per-capture totals (paired t test with --paired)",
    "q_value": "Benjamini-Hochberg adjusted p-value over every tested key",
    "flagged": "q_value <= --fdr and |change_pct| >= --min-effect",
}

TABLES: dict[str, dict[str, str]] = {
    "stats.pairs": _PAIRS,
    "stats.values": _VALUES,
    "profile.keys": _KEYS,
}
