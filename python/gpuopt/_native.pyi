"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "NcuReport",
    "NsysReport",
    "NsysStatsDoc",
    "TorchTrace",
    "__version__",
    "analysis_critical_path",
    "analysis_detected_steps",
    "analysis_iterations",
    "analysis_queue",
    "analysis_sequences",
    "build_info_json",
    "call_processes",
    "canonical_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "gpu_peaks_json",
    "group_exists",
    "ledger_append",
    "ledger_rewrite",
    "map_account",
    "ncu_compare",
    "ncu_from_columns",
    "ncu_open_csv",
    "ncu_rep_framing_json",
    "ncu_unit",
    "nsys_export_perfetto",
    "nsys_open",
    "nsys_ranks",
    "nsys_stats_reports",
    "proc_alive",
    "proc_info",
    "profile_diff_keys",
    "reap_zombies",
    "rename_noreplace",
    "sass_builtin_catalog",
    "sass_scan_path",
    "sass_scan_text",
    "set_child_subreaper",
    "settle",
    "stats_compare",
    "stats_compare_files",
    "stats_compare_unpaired",
    "stats_constraint",
    "stats_guardrail",
    "stats_input_seed",
    "stats_mde_pct",
    "stats_noise",
    "stats_noise_file",
    "stats_pair_effects",
    "stats_rng_draws",
    "stats_schedule",
    "stats_simulate",
    "stats_summarize",
    "storage_probe",
    "store_cas",
    "store_ensure_dir",
    "store_exists",
    "store_freeze",
    "store_lock_fd",
    "store_manifest",
    "store_materialize",
    "store_read",
    "store_remove",
    "store_replace",
    "store_verify_objects",
    "store_write_once",
    "table_fields_json",
    "terminate",
    "torch_export_perfetto",
    "torch_flops",
    "torch_kernel_paths",
    "torch_paths",
    "torch_trace_open",
    "torch_trace_open_paths",
    "validate_id",
]

__version__: str
BUILD_ID: str

def file_identity_json(path: str, cache_dir: str | None = None) -> bytes:
    """JSON ``{identity: {path, size_bytes, sha256, from_cache}, warnings}`` of a regular file, through
    the identity cache under ``cache_dir`` when given; raises ``gpuopt.errors.InputError``."""

@final
class ArrowTable:
    """A native table; ``polars.DataFrame(table)`` takes it through the Arrow PyCapsule stream."""

    def __arrow_c_stream__(self, requested_schema: Any | None = None) -> Any: ...
    def __len__(self) -> int: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def column_names(self) -> list[str]: ...

def file_identities_table(paths: list[str]) -> ArrowTable:
    """``path``, ``size_bytes``, ``sha256`` of many regular files, hashed in parallel."""

def build_info_json() -> bytes:
    """JSON ``{version, build_id, source_sha256, profile, target, rustc}`` of this native build."""

def debug_panic() -> None:
    """Panics inside the engine on purpose; surfaces as ``gpuopt.errors.InternalError``."""

def table_fields_json() -> bytes:
    """JSON ``[{key, columns: [{name, dtype, unit, meaning}]}]``: every table the engines build, each
    column declared once where it is computed (``rust/src/<area>/fields.rs``), sorted by key."""

@final
class TorchTrace:
    """A Kineto trace file or folder of rank traces, read and linked once (``torch_trace_open``)."""

    @property
    def num_traces(self) -> int: ...
    def scoped(
        self, *, steps: tuple[int, int] | None = None, window: tuple[int, int] | None = None
    ) -> TorchTrace:
        """The traces restricted to ``ProfilerStep#FIRST..LAST`` or a ``[start, end)`` ns window."""

    def overview_json(self) -> bytes:
        """JSON list of ``{path, global_rank, platform, format, gpu_absent}``."""

    def unmodeled_json(self) -> bytes:
        """JSON list of ``{kind, name, count}`` over all traces."""

    def summary_json(self, kernel_wait_threshold_ns: int) -> bytes:
        """JSON ``{traces: [...]}`` (``gpuopt.models.torch_trace.TorchSummary``)."""

    def timer_resolution_ns(self) -> int: ...
    def kernels(self) -> ArrowTable: ...
    def api(self) -> ArrowTable: ...
    def ops(self) -> ArrowTable: ...
    def steps(self) -> ArrowTable: ...
    def launches(self) -> ArrowTable: ...
    def graphs(self) -> ArrowTable: ...
    def transfers(self) -> ArrowTable: ...
    def collectives(self) -> ArrowTable: ...
    def comm(self) -> ArrowTable: ...
    def ranks(self) -> tuple[ArrowTable, ArrowTable, ArrowTable, str]:
        """``(ranks, collectives, stragglers, rank_source)`` of the traces as one job's ranks."""

    def streams(self, kernel_wait_threshold_ns: int) -> ArrowTable: ...
    def gaps(self, kernel_wait_threshold_ns: int) -> ArrowTable: ...

def analysis_iterations(
    source: NsysReport | TorchTrace, marker: str | None = None
) -> tuple[ArrowTable, bytes]:
    """Iterations of every source and a JSON list of how they were found (one entry per trace)."""

def analysis_critical_path(
    source: NsysReport | TorchTrace,
    marker: str | None = None,
    using: str | None = None,
    step: int | None = None,
    head: int | None = None,
) -> tuple[ArrowTable, ArrowTable, int, bytes]:
    """Per-step critical paths, their stretches (those of the steps whose row is ``step``, else the
    first ``head`` of each trace, else all), how many stretches there are in all, and the JSON list of
    how the steps were found."""

def analysis_queue(
    source: NsysReport | TorchTrace, series: bool = False
) -> tuple[ArrowTable, ArrowTable | None]:
    """Queue facts per stream and device, and (``series``) the depth over time."""

def analysis_sequences(source: NsysReport | TorchTrace, n: int = 3) -> ArrowTable:
    """The repeating unit and the kernel n-grams of every device."""

def analysis_detected_steps(source: NsysReport | TorchTrace) -> bytes:
    """JSON list of detected iterations per trace (device, count, kernel time)."""

def torch_trace_open(path: str) -> TorchTrace:
    """Reads a Kineto trace (``.json``/``.json.gz``) or a folder of them; raises ``InputError``."""

def torch_trace_open_paths(paths: list[str]) -> TorchTrace:
    """Reads several trace files or folders as the ranks of one job."""

# Call paths, FLOPs and Perfetto exports (rust/src/py/{paths,flops,perfetto}.rs).

def torch_paths(trace: TorchTrace) -> ArrowTable:
    """One row per distinct host path (cpu_op / record_function ranges): inclusive/exclusive CPU and
    GPU time."""

def torch_kernel_paths(trace: TorchTrace) -> ArrowTable:
    """GPU events grouped by (path, launching call, launch kind, name, kind)."""

def torch_flops(trace: TorchTrace, gpu: str | None = None) -> tuple[ArrowTable, ArrowTable, bytes, bytes]:
    """``(ops, steps, gpus_json, unmodeled_json)``: FLOPs and bytes per op from recorded shapes, MFU
    per step, the datasheet row chosen per rank, the ops without a formula."""

def gpu_peaks_json() -> bytes:
    """The datasheet peak table (``gpuopt.gpu-peaks/1``)."""

def torch_export_perfetto(
    trace: TorchTrace,
    out: str,
    *,
    kernel_wait_threshold_ns: int,
    flagged_by: str | None = None,
    flagged: list[tuple[str, float | None]] = ...,
    extra: list[tuple[str, list[tuple[int, int, str]]]] = ...,
) -> bytes:
    """Writes a Perfetto trace of the Kineto trace to ``out``; JSON of what was written."""

def nsys_export_perfetto(
    report: NsysReport,
    out: str,
    *,
    start: int | None = None,
    end: int | None = None,
    nvtx: str | None = None,
    all_api: bool = False,
    flagged_by: str | None = None,
    flagged: list[tuple[str, float | None]] = ...,
    extra: list[tuple[str, list[tuple[int, int, str]]]] = ...,
) -> bytes:
    """Writes a Perfetto trace of the nsys export to ``out``; JSON of what was written."""

# Statistics (rust/src/py/stats.rs). Values are little-endian float64 buffers, call offsets uint64,
# case codes uint32, orders and validity uint8; options are CompareOptions JSON; documents come back as JSON.

def stats_compare(
    baseline: bytes,
    candidate: bytes,
    options_json: bytes,
    *,
    baseline_offsets: bytes | None = None,
    candidate_offsets: bytes | None = None,
    cases: bytes | None = None,
    case_names: list[str] | None = None,
    case_weights: list[float] | None = None,
    orders: bytes | None = None,
    valid: bytes | None = None,
) -> tuple[bytes, ArrowTable]:
    """A paired comparison (JSON ``Comparison``) and its pairs table."""

def stats_compare_unpaired(
    baseline: bytes,
    candidate: bytes,
    options_json: bytes,
    *,
    baseline_offsets: bytes | None = None,
    candidate_offsets: bytes | None = None,
) -> tuple[bytes, ArrowTable]:
    """An unpaired comparison (JSON ``Comparison``) and the table of both sides' values."""

def stats_compare_files(
    baseline: str, candidate: str, read_json: bytes, options_json: bytes, unpaired: bool
) -> tuple[bytes, ArrowTable]:
    """Reads two sample files and compares them: JSON ``{files, comparison}`` and the table."""

def stats_noise(
    first: bytes,
    second: bytes,
    options_json: bytes,
    at: list[int],
    *,
    first_offsets: bytes | None = None,
    second_offsets: bytes | None = None,
    orders: bytes | None = None,
    valid: bytes | None = None,
) -> tuple[bytes, ArrowTable]:
    """Noise from A/A pairs: JSON ``NoiseReport`` and the A/A pairs table."""

def stats_noise_file(
    path: str, first_column: str, second_column: str, read_json: bytes, options_json: bytes, at: list[int]
) -> tuple[bytes, ArrowTable]:
    """Noise from one file with both A/A values per row: JSON ``{files, noise}`` and the pairs table."""

def stats_simulate(options_json: bytes) -> bytes:
    """The honesty harness: JSON ``SimulationReport``."""

def stats_schedule(pairs: int, seed: int) -> bytes:
    """A seeded balanced AB/BA schedule: JSON ``{rng, seed, pairs, orders}``."""

def stats_summarize(values: bytes, offsets: bytes, within_call: str) -> bytes:
    """Each call's within-call summary (float64)."""

def stats_pair_effects(reference: bytes, candidate: bytes, direction: str, effect_scale: str) -> bytes:
    """Each pair's effect (float64; NaN where a value is not finite and positive)."""

def stats_mde_pct(sd_log: float, n: int, estimator: str, confidence: float, power: float) -> float:
    """The minimum detectable effect at n pairs from an A/A SD, as a percentage (normal approximation)."""

def stats_input_seed(plan_seed: int, pair_index: int, case_id: str) -> int:
    """The 53-bit seed a driver receives for one call (``gpuopt.rng/v1`` key ``input``)."""

def stats_rng_draws(tag: str, parts_json: bytes, count: int) -> bytes:
    """JSON ``{rng, key, draws}``: the key and first outputs of the gpuopt.rng/v1 stream (tag, parts)."""

def stats_constraint(
    baseline: bytes,
    candidate: bytes,
    options_json: bytes,
    limit_json: bytes,
    *,
    baseline_offsets: bytes | None = None,
    candidate_offsets: bytes | None = None,
    valid: bytes | None = None,
) -> bytes:
    """A relative or absolute non-inferiority constraint: JSON ``ConstraintResult``."""

def stats_guardrail(
    candidate: bytes,
    options_json: bytes,
    op: str,
    limit: float,
    mode: str,
    *,
    candidate_offsets: bytes | None = None,
    valid: bytes | None = None,
) -> bytes:
    """An absolute guardrail on the candidate's values: JSON ``GuardrailResult``."""

def sass_scan_path(
    path: str, catalog_json: bytes | None = None, evidence_limit: int = 3
) -> tuple[bytes, ArrowTable, ArrowTable, ArrowTable]:
    """One pass over a SASS listing file: ``(summary_json, functions, opcodes, signatures)``."""

def sass_scan_text(
    text: bytes, catalog_json: bytes | None = None, evidence_limit: int = 3
) -> tuple[bytes, ArrowTable, ArrowTable, ArrowTable]:
    """The same as :func:`sass_scan_path` for a listing held in memory."""

def sass_builtin_catalog() -> bytes:
    """The SASS signature catalog compiled into this build."""

@final
class NcuReport:
    """A parsed Nsight Compute report held natively; each method builds one table."""

    @property
    def num_launches(self) -> int: ...
    def info_json(self) -> bytes: ...
    def unmodeled_json(self) -> bytes: ...
    def launches(self) -> ArrowTable: ...
    def kernels(self) -> ArrowTable: ...
    def warp_stalls(self) -> ArrowTable: ...
    def instruction_mix(self) -> ArrowTable: ...
    def rules(self) -> ArrowTable: ...
    def sections(self) -> ArrowTable: ...
    def metrics(self) -> ArrowTable: ...
    def roofline(
        self, peak_flop_per_s: list[tuple[str, float]], peak_dram_bytes_per_s: float | None = None
    ) -> ArrowTable: ...

def ncu_open_csv(path: str, session: str | None = None, details: str | None = None) -> NcuReport:
    """A raw or details page of ``ncu --csv``; ``session``/``details`` pages of the same report add to it."""

def ncu_rep_framing_json(path: str) -> bytes:
    """JSON framing of an ``.ncu-rep``: format version, results, tool version, command line, devices."""

def ncu_from_columns(
    path: str,
    extras_json: bytes,
    launch: list[int],
    name: list[str],
    unit: list[str],
    kind: list[int],
    number: list[float],
    text: list[str],
) -> NcuReport:
    """A report from columns read by ``ncu_report`` (kind: 0 missing, 1 number, 2 text)."""

def map_account(
    start_ns: bytes, end_ns: bytes, group: bytes, groups: int, window: tuple[int, int] | None = None
) -> tuple[bytes, ArrowTable]:
    """Execution-map account of little-endian int64 start/end and uint32 group columns: (totals JSON,
    per-group table)."""

def ncu_compare(a: NcuReport, b: NcuReport, metrics: list[str]) -> ArrowTable:
    """Per-kernel deltas of every fact (and the named metrics) between two reports."""

def ncu_unit(unit: str) -> tuple[str, float] | None:
    """``(base unit, factor)`` of an ncu unit, or None when gpuopt's unit table does not know it."""

# ---- evaluation store (rust/src/store) -------------------------------------------------------------------

def canonical_json(data: bytes) -> bytes:
    """Strict parse, then RFC 8785 canonical bytes; ``json_invalid`` with the JSON path otherwise."""

def validate_id(kind: str, id: str) -> None:
    """``path_unsafe`` unless ``id`` has the exact shape of ``kind`` (target, invocation, selection, ...)."""

def store_freeze(
    source: str,
    store_root: str | None,
    exclude: list[str],
    max_files: int,
    max_total_bytes: int,
    max_wall_s: float,
) -> bytes:
    """Freezes a file or tree (into ``store_root`` when given); JSON of the frozen object and its manifest."""

def store_materialize(store_root: str, digest: str, destination: str) -> bytes:
    """Writes an object to a new destination, re-hashing every byte; JSON summary."""

def store_manifest(store_root: str, digest: str) -> bytes:
    """The verified manifest of an object, as JSON."""

def store_verify_objects(store_root: str, referenced: list[str], deep: bool) -> bytes:
    """Checks manifests, the blobs they list (size; ``deep``: every blob's hash) and that every ``referenced``
    digest has a manifest; JSON ``{blobs, manifests, defects, manifests_missing, blobs_unreferenced,
    temp_files}``. Reads only."""

def store_write_once(root: str, rel: str, data: bytes) -> bytes:
    """Publishes ``data`` at ``rel`` once; JSON ``{sha256, created, mtime_ns}``."""

def store_replace(root: str, rel: str, data: bytes, mode: int, durable: bool = True) -> bytes:
    """Atomically replaces ``rel``; JSON ``{sha256, created, mtime_ns}``; ``durable=False`` skips fsync."""

def store_read(root: str, rel: str, max_bytes: int) -> bytes:
    """Reads a regular file below ``root`` without following links."""

def store_exists(root: str, rel: str) -> bool:
    """Whether ``rel`` exists below ``root`` (validating the path)."""

def store_remove(root: str, rel: str, durable: bool = True) -> bool:
    """Removes a file below ``root``; ``False`` when absent; ``durable=False`` skips the folder fsync."""

def store_ensure_dir(root: str, rel: str) -> None:
    """Creates folders below ``root`` without following links."""

def store_lock_fd(root: str, rel: str) -> int:
    """Opens (creating) a lock file below ``root``; the caller owns the descriptor."""

def store_cas(
    root: str,
    rel: str,
    lock_rel: str,
    expected: str | None,
    replacement: bytes | None,
    creates: list[tuple[str, bytes]],
) -> bytes:
    """Compare-and-swap of ``rel`` under ``lock_rel``; ``stale_reference`` on another hash."""

def ledger_append(root: str, rel: str, entry: bytes, sync: bool = True) -> bytes:
    """Appends a JSON object to a sequenced JSON-lines file, adding ``seq`` (fsynced unless ``sync`` is
    false); returns the line."""

def ledger_rewrite(root: str, lines: list[bytes]) -> str:
    """Replaces the ledger with these lines; returns its sha256."""

def rename_noreplace(source: str, destination: str) -> None:
    """Renames a file or folder unless the destination exists (``root_exists``)."""

def storage_probe(directory: str) -> bytes:
    """JSON ``[{name, ok, detail}]`` for each storage guarantee the store needs."""

# ---- evaluation runtime (rust/src/runtime) -----------------------------------------------------------------

def proc_info(pid: int) -> bytes | None:
    """JSON ``{pid, ppid, pgid, sid, state, start_token}`` from ``/proc``, or None."""

def proc_alive(pid: int, start_token: str) -> bool:
    """Alive, not a zombie, and started at ``start_token``."""

def group_exists(pgid: int) -> bool:
    """Any process (zombies included) left in the group."""

def set_child_subreaper() -> None:
    """Makes this process the reaper of its orphaned descendants."""

def reap_zombies(keep: list[int]) -> list[tuple[int, int]]:
    """Reaps zombie children except ``keep``; ``(pid, returncode)`` each."""

def call_processes(pgid: int, reaper: int | None, exclude: list[int], tag: str | None) -> bytes:
    """JSON list of a call's processes: its group, descendants of ``reaper``, holders of env entry ``tag``."""

def settle(pgid: int, reaper: int | None, exclude: list[int], tag: str | None, settle_s: float) -> bytes:
    """Waits for a finished call to leave nothing; JSON ``{left, reaped}``."""

def terminate(
    pgid: int, reaper: int | None, exclude: list[int], tag: str | None, grace_s: float, timeout_s: float
) -> bytes:
    """SIGTERM, grace, SIGKILL, verify; JSON ``{confirmed, signals, escaped, survivors, reaped, ...}``."""

@final
class NsysStatsDoc:
    """One computed ``nsys stats`` report, printed natively (``gpuopt nsys stats --csv/--json``)."""

    def csv(self, path: str | None = None, missing: list[str] = ...) -> str: ...
    def envelope(
        self,
        limit: int,
        schema: str,
        gpuopt_version: str,
        not_captured: list[str],
        identity: tuple[str, int, str, bool],
    ) -> str: ...

@final
class NsysReport:
    """An opened, validated nsys SQLite export (see ``gpuopt.nsys``)."""

    @property
    def path(self) -> str: ...
    def captured_tables(self) -> list[str]: ...
    def unread_tables(self) -> list[str]: ...
    def info_json(self) -> bytes: ...
    def graph_trace_mode(self) -> str | None: ...
    def timer_resolution_ns(self) -> int: ...
    def devices(self) -> list[int]: ...
    def stats(
        self,
        report: str,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> ArrowTable: ...
    def stats_doc(
        self,
        report: str,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
    ) -> NsysStatsDoc: ...
    def kernels(
        self,
        short_names: bool = False,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> ArrowTable: ...
    def memory(
        self,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> ArrowTable: ...
    def nvtx(
        self,
        per_instance: bool = False,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
        device: int | None = None,
    ) -> ArrowTable: ...
    def comm(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> ArrowTable: ...
    def gaps(
        self,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
        top: int | None = None,
        first: int | None = None,
    ) -> ArrowTable: ...
    def operations(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> ArrowTable: ...
    def timeline_json(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> bytes: ...
    def graphs_json(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> bytes: ...
    def timeline_graphs_json(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> tuple[bytes, bytes]: ...
    def coverage_json(self, fact: str) -> bytes: ...

def nsys_open(path: str) -> NsysReport:
    """Opens and validates an nsys SQLite export; raises ``gpuopt.errors.InputError`` subclasses."""

def nsys_ranks(paths: list[str], step: str | None = None) -> tuple[ArrowTable, ArrowTable, ArrowTable, str]:
    """``(ranks, collectives, stragglers, clock)``: one rank per process with kernels, file order then pid."""

def nsys_stats_reports() -> list[str]:
    """The ``nsys stats`` report names gpuopt reproduces."""

# Profile comparison (rust/src/py/profile.rs): per-key totals as little-endian float64 keys x captures.

def profile_diff_keys(
    keys: list[str],
    baseline: bytes,
    k_baseline: int,
    candidate: bytes,
    k_candidate: int,
    options_json: bytes,
    baseline_instances: bytes | None = None,
    candidate_instances: bytes | None = None,
    baseline_q_ns: list[float] | None = None,
    candidate_q_ns: list[float] | None = None,
    baseline_scale: list[float] | None = None,
    candidate_scale: list[float] | None = None,
) -> ArrowTable:
    """One row per key: means, change, t interval over captures, p, BH q and ``flagged``; with a side's
    instances (keys x captures) and timer resolutions, the test's variance is floored by the rounding
    variance instances·q²/6·scale²."""
