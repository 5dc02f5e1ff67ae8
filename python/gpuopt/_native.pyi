"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "NcuReport",
    "__version__",
    "build_info_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "ncu_compare",
    "ncu_from_columns",
    "ncu_open_csv",
    "ncu_rep_framing_json",
    "ncu_unit",
]

__version__: str
BUILD_ID: str

def file_identity_json(path: str) -> bytes:
    """JSON ``{path, size_bytes, sha256}`` of a regular file; raises ``gpuopt.errors.InputError``."""

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

def ncu_compare(a: NcuReport, b: NcuReport, metrics: list[str]) -> ArrowTable:
    """Per-kernel deltas of every fact (and the named metrics) between two reports."""

def ncu_unit(unit: str) -> tuple[str, float] | None:
    """``(base unit, factor)`` of an ncu unit, or None when gpuopt's unit table does not know it."""
