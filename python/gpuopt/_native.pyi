"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

__all__ = ["BUILD_ID", "__version__", "build_info_json", "debug_panic", "file_identity_json"]

__version__: str
BUILD_ID: str

def file_identity_json(path: str) -> bytes:
    """JSON ``{path, size_bytes, sha256}`` of a regular file; raises ``gpuopt.errors.InputError``."""

def build_info_json() -> bytes:
    """JSON ``{version, build_id, source_sha256, profile, target, rustc}`` of this native build."""

def debug_panic() -> None:
    """Panics inside the engine on purpose; surfaces as ``gpuopt.errors.InternalError``."""
