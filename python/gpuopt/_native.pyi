"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "NsysReport",
    "__version__",
    "build_info_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "nsys_open",
    "nsys_stats_reports",
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
class NsysReport:
    """An opened, validated nsys SQLite export (see ``gpuopt.nsys``)."""

    @property
    def path(self) -> str: ...
    def captured_tables(self) -> list[str]: ...
    def unread_tables(self) -> list[str]: ...
    def info_json(self) -> bytes: ...
    def stats(
        self,
        report: str,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
    ) -> ArrowTable: ...
    def kernels(
        self,
        short_names: bool = False,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
    ) -> ArrowTable: ...
    def memory(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> ArrowTable: ...
    def nvtx(
        self,
        per_instance: bool = False,
        window_start_ns: int | None = None,
        window_end_ns: int | None = None,
        nvtx: str | None = None,
    ) -> ArrowTable: ...
    def gaps(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> ArrowTable: ...
    def timeline_json(
        self, window_start_ns: int | None = None, window_end_ns: int | None = None, nvtx: str | None = None
    ) -> bytes: ...

def nsys_open(path: str) -> NsysReport:
    """Opens and validates an nsys SQLite export; raises ``gpuopt.errors.InputError`` subclasses."""

def nsys_stats_reports() -> list[str]:
    """The ``nsys stats`` report names gpuopt reproduces."""
