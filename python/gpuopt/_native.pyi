"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "__version__",
    "build_info_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "sass_builtin_catalog",
    "sass_scan_path",
    "sass_scan_text",
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
