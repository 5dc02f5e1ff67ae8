"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "TorchTrace",
    "__version__",
    "build_info_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "torch_trace_open",
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
class TorchTrace:
    """A Kineto trace file or folder of rank traces, read and linked once (``torch_trace_open``)."""

    @property
    def num_traces(self) -> int: ...
    def overview_json(self) -> bytes:
        """JSON list of ``{path, global_rank, platform, format, gpu_absent}``."""

    def unmodeled_json(self) -> bytes:
        """JSON list of ``{kind, name, count}`` over all traces."""

    def summary_json(self, kernel_wait_threshold_ns: int) -> bytes:
        """JSON ``{traces: [...]}`` (``gpuopt.models.torch_trace.TorchSummary``)."""

    def kernels(self) -> ArrowTable: ...
    def ops(self) -> ArrowTable: ...
    def steps(self) -> ArrowTable: ...
    def launches(self) -> ArrowTable: ...
    def transfers(self) -> ArrowTable: ...
    def collectives(self) -> ArrowTable: ...
    def streams(self, kernel_wait_threshold_ns: int) -> ArrowTable: ...
    def gaps(self, kernel_wait_threshold_ns: int) -> ArrowTable: ...

def torch_trace_open(path: str) -> TorchTrace:
    """Reads a Kineto trace (``.json``/``.json.gz``) or a folder of them; raises ``InputError``."""
