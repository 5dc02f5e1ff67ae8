"""Each evaluated condition as a plain sentence: the fact in words with its value and unit, the comparison,
the threshold and where the threshold came from (a cited source, another fact of the same subject, or
the presence test). The machine-readable fields (value, op, threshold) stay as they are; this is the
text people read.
"""

from __future__ import annotations

from gpuopt.models.knowledge import Condition, SourceCitation

#: SCOPE:FIELD -> (the fact in words, its unit: "" for a count). A fact missing here (a custom registry's)
#: is named by its SCOPE:FIELD.
FACTS: dict[str, tuple[str, str]] = {
    # ncu: one subject per kernel, each fact the mean over its launches.
    "ncu.launch:block_size": ("mean block size", "threads"),
    "ncu.launch:local_load_bytes": ("mean local-memory load traffic per launch", "bytes"),
    "ncu.launch:local_store_bytes": ("mean local-memory store traffic per launch", "bytes"),
    "ncu.launch:memory_throughput_pct": ("mean memory throughput", "% of peak"),
    "ncu.launch:registers_per_thread": ("mean registers per thread", ""),
    "ncu.launch:sm_throughput_pct": ("mean SM throughput", "% of peak"),
    "ncu.launch:tensor_hmma_pipe_active_pct": ("mean tensor-core (HMMA) pipe activity", "% of peak"),
    "ncu.launch:waves_per_sm": ("mean waves per SM", ""),
    # SASS: one subject per function, counts of instructions in the listing.
    "sass.function:async_copy_count": ("number of asynchronous copy instructions (LDGSTS)", ""),
    "sass.function:barrier_count": ("number of barrier, fence and sync instructions", ""),
    "sass.function:global_atomic_count": ("number of global atomic instructions", ""),
    "sass.function:integer_division_rcp_count": ("number of MUFU.RCP in integer divisions", ""),
    "sass.function:local_load_count": ("number of local-memory load instructions (LDL)", ""),
    "sass.function:local_store_count": ("number of local-memory store instructions (STL)", ""),
    "sass.function:special_function_count": ("number of special-function unit instructions (MUFU)", ""),
    "sass.function:tensor_core_count": ("number of tensor-core MMA instructions", ""),
    "sass.function:tensor_memory_count": ("number of tensor-memory instructions", ""),
    "sass.function:tma_bulk_copy_count": ("number of TMA and bulk-copy instructions", ""),
    "sass.function:warp_shuffle_count": ("number of warp shuffle instructions (SHFL)", ""),
    "sass.function:warpgroup_count": ("number of warpgroup instructions", ""),
    # Compiler reports: one subject per function.
    "ptxas.function:registers": ("registers per thread (ptxas)", ""),
    "ptxas.function:spill_store_bytes": ("register spill stores (ptxas)", "bytes"),
    # nsys: one subject per device; the api rows are capture-wide.
    "nsys.api:num_calls": ("number of {rows} calls", ""),
    "nsys.device:busy_pct": ("share of the device's span with GPU work running", "%"),
    "nsys.device:compute_copy_overlap_ns": ("time kernels and copies ran at once", "ns"),
    "nsys.device:concurrency.max_kernels": ("most kernels running at once", ""),
    "nsys.device:copy_busy_ns": ("time copies (memcpy, memset) ran", "ns"),
    "nsys.device:gaps.max_ns": ("longest idle gap", "ns"),
    "nsys.device:kernels": ("number of kernels on the device", ""),
    "nsys.device:launch.api_time.median_ns": ("median launch call time", "ns"),
    "nsys.device:launch.kernel_time.median_ns": ("median kernel time", "ns"),
    "nsys.device:launch.queue_delay.median_ns": (
        "median queue delay from launch call end to kernel start",
        "ns",
    ),
    # torch: one subject per (rank, device), or per (rank, op name).
    "torch.device:idle_by_cause.host_wait_ns": ("GPU idle time waiting on the host", "ns"),
    "torch.device:temporal.communication_ns": ("communication time not overlapping compute", "ns"),
    "torch.device:temporal.window_ns": ("trace window (first to last GPU event)", "ns"),
    "torch.op:gpu_events": ("number of GPU events the op launched", ""),
    "torch.op:gpu_time_ns": ("GPU time of the op's own events", "ns"),
    "torch.op:self_cpu_ns": ("host time in the op itself", "ns"),
}

_HOLDS: dict[str, str] = {
    ">": "is above",
    ">=": "is at least",
    "<": "is below",
    "<=": "is at most",
    "==": "equals",
    "!=": "differs from",
}
_FAILS: dict[str, str] = {
    ">": "is not above",
    ">=": "is below",
    "<": "is not below",
    "<=": "is above",
    "==": "differs from",
    "!=": "equals",
}


def number(value: float) -> str:
    """A value as people read it: thousands separated, integers without a fraction, 3 significant digits
    below 100."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.3g}"


def _with_unit(value: float, unit: str) -> str:
    if not unit:
        return number(value)
    return f"{number(value)} %" if unit == "%" else f"{number(value)} {unit}"


def label(fact: str, rows: str | None = None) -> tuple[str, str]:
    """The fact in words and its unit."""
    words, unit = FACTS.get(fact, (fact, ""))
    return words.replace("{rows}", rows or "matching"), unit


def sentence(
    c: Condition,
    value: float,
    threshold: float,
    holds: bool,
    other_value: float | None,
    source: SourceCitation | None,
) -> str:
    """``median kernel time 1,806 ns is below the median launch call time 7,259 ns``."""
    words, unit = label(c.fact, c.rows)
    verb = (_HOLDS if holds else _FAILS)[c.op]
    if c.per is not None:
        per_words, per_unit = label(c.per)
        if per_unit == unit and unit:  # a share of a like quantity: in percent
            words, unit = f"{words} as a share of the {per_words}", "%"
            value, threshold = 100 * value, 100 * threshold
        else:
            words, unit = f"{words} per {per_words}", ""
    subject = f"{words} {_with_unit(value, unit)}"
    if c.other is not None and other_value is not None:
        other_words, other_unit = label(c.other)
        other = f"the {other_words} {_with_unit(other_value, other_unit)}"
        if c.value != 1:
            other = f"{number(c.value)} times {other} ({_with_unit(threshold, other_unit)})"
        return f"{subject} {verb} {other}"
    if source is not None:
        origin = f" (threshold from {source.title}: {source.locator})"
        return f"{subject} {verb} {_with_unit(threshold, unit)}{origin}"
    if threshold == 0:
        tests = "any" if c.op in (">", "!=") else "none"
        return f"{subject} {verb} zero (the rule tests for {tests})"
    return f"{subject} {verb} {_with_unit(threshold, unit)} (the card's value, no source)"
