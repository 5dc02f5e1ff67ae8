"""Type stubs for the native module ``gpuopt._native`` (built from ``rust/src/py``)."""

from typing import Any, final

__all__ = [
    "BUILD_ID",
    "ArrowTable",
    "__version__",
    "build_info_json",
    "call_processes",
    "canonical_json",
    "debug_panic",
    "file_identities_table",
    "file_identity_json",
    "group_exists",
    "ledger_append",
    "ledger_rewrite",
    "proc_alive",
    "proc_info",
    "reap_zombies",
    "rename_noreplace",
    "set_child_subreaper",
    "settle",
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
    "terminate",
    "validate_id",
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

def store_verify_objects(store_root: str, deep: bool, repair: bool) -> bytes:
    """Checks blobs and manifests; with ``repair`` removes temp files and unreferenced blobs."""

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
