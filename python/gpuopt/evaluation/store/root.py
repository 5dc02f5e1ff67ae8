"""One artifact root (:class:`Store`): records, objects, ledger and locks, all through the native no-follow
primitives.

Layout (spec §2.8): ``target.json``, ``objects/{blobs,trees,tmp}``, ``experiments/``, ``invocations/``,
``champion/``, ``maps/``, ``ledger/records.jsonl``, ``locks/``, ``staging/``. Records are canonical JSON and
a newline, published once; the ledger gets one line per publication, appended under ``flock``.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.store.trees import frozen_object
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.store import FrozenObject, LedgerKind, LedgerLine, ScanLimits, TreeManifest

M = TypeVar("M", bound=BaseModel)

LEDGER = "ledger/records.jsonl"
TEMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class Published:
    """A record just written: its path below the root, file sha256, whether it was new, its mtime."""

    rel: str
    sha256: str
    created: bool
    mtime_ns: int


class Store:
    """An artifact root (one per Target)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.abspath(root))

    @classmethod
    def open(cls, root: str | Path) -> Store:
        path = Path(root)
        if not path.is_dir() or path.is_symlink():
            raise InputError("root_not_found", f"no artifact root at {path}", path=str(path))
        return cls(path)

    def __str__(self) -> str:
        return str(self.root)

    def path(self, rel: str) -> Path:
        _native.store_exists(str(self.root), rel)  # validates the relative path
        return self.root / rel

    # ---- records ---------------------------------------------------------------------------------------

    def write_record(self, rel: str, value: Any) -> Published:
        """Publishes a record once (canonical JSON + newline); identical existing bytes are accepted."""
        return self.write_bytes(rel, jsonio.record_bytes(value))

    def write_bytes(self, rel: str, data: bytes) -> Published:
        out = json.loads(_native.store_write_once(str(self.root), rel, data))
        return Published(rel, out["sha256"], out["created"], out["mtime_ns"])

    def replace_bytes(self, rel: str, data: bytes, mode: int = 0o644, *, durable: bool = True) -> Published:
        out = json.loads(_native.store_replace(str(self.root), rel, data, mode, durable))
        return Published(rel, out["sha256"], True, out["mtime_ns"])

    def read_bytes(self, rel: str, *, max_bytes: int = jsonio.MAX_RECORD_BYTES) -> bytes:
        return _native.store_read(str(self.root), rel, max_bytes)

    def exists(self, rel: str) -> bool:
        return _native.store_exists(str(self.root), rel)

    def remove(self, rel: str, *, durable: bool = True) -> bool:
        return _native.store_remove(str(self.root), rel, durable)

    def ensure_dir(self, rel: str) -> Path:
        _native.store_ensure_dir(str(self.root), rel)
        return self.root / rel

    def read_record(self, rel: str, model: type[M], *, what: str, sha256: str | None = None) -> tuple[M, str]:
        """Reads a record strictly; with ``sha256``, its bytes must still hash to it (``record_changed``)."""
        try:
            data = self.read_bytes(rel)
        except InputError as exc:
            if exc.code == "file_not_found":
                raise InputError("record_not_found", f"no {what} at {self.root / rel}", path=rel) from None
            raise
        actual = jsonio.sha256_hex(data)
        if sha256 is not None and actual != sha256:
            raise InputError(
                "record_changed",
                f"the {what} at {rel} no longer matches its ref",
                path=rel,
                expected=sha256,
                observed=actual,
            )
        try:
            value = jsonio.load(model, data, what=what, max_bytes=jsonio.MAX_RECORD_BYTES)
        except InputError as exc:
            raise InputError(
                "record_invalid", f"the {what} at {rel} is invalid: {exc.message}", path=exc.path
            ) from None
        if data != jsonio.record_bytes(jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES)):
            raise InputError("record_invalid", f"the {what} at {rel} is not canonical JSON", path=rel)
        return value, actual

    # ---- objects ---------------------------------------------------------------------------------------

    def freeze(self, source: str | Path, *, exclude: list[str], limits: ScanLimits) -> FrozenObject:
        """Freezes a file or tree into this root's object store. Its blobs are unreferenced until the
        manifest, written last: the root lock is held shared throughout (``verify --repair`` is refused)."""
        with self.lock("root", exclusive=False):
            out = _native.store_freeze(
                str(source),
                str(self.root),
                list(exclude),
                limits.max_files,
                limits.max_total_bytes,
                limits.max_wall_s,
            )
        return frozen_object(out)

    def materialize(self, digest: str, destination: str | Path) -> Path:
        """Writes object ``digest`` to ``destination`` (which must not exist), verifying every byte."""
        _native.store_materialize(str(self.root), digest, str(destination))
        return Path(destination)

    def manifest(self, digest: str) -> TreeManifest:
        return TreeManifest.model_validate_json(_native.store_manifest(str(self.root), digest))

    def read_blob(self, sha256: str, *, max_bytes: int) -> bytes:
        """A blob's bytes, re-verified against its name (``object_corrupt``)."""
        data = self.read_bytes(f"objects/blobs/{sha256[:2]}/{sha256}", max_bytes=max_bytes)
        if jsonio.sha256_hex(data) != sha256:
            raise InputError("object_corrupt", f"blob {sha256} is corrupt", path=f"objects/blobs/{sha256}")
        return data

    # ---- locks -----------------------------------------------------------------------------------------

    @contextmanager
    def lock(self, name: str, *, exclusive: bool = True, wait: bool = True) -> Iterator[None]:
        """Holds ``flock`` on ``locks/<name>.lock`` (never deleted); without ``wait``, a lock held by someone
        else is ``store_busy``."""
        fd = _native.store_lock_fd(str(self.root), f"locks/{name}.lock")
        try:
            try:
                fcntl.flock(
                    fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | (0 if wait else fcntl.LOCK_NB)
                )
            except BlockingIOError:
                raise InputError(
                    "store_busy",
                    f"a writer holds {self.root} (an evaluation freezing or publishing); this needs the root "
                    "alone: run it again once the writers are done",
                    path=f"locks/{name}.lock",
                ) from None
            yield
        finally:
            os.close(fd)

    # ---- ledger ----------------------------------------------------------------------------------------

    def ledger_append(
        self, kind: LedgerKind, record_id: str, published: Published, keys: dict[str, Any]
    ) -> LedgerLine:
        entry = {
            "at_epoch": published.mtime_ns / 1e9,
            "kind": kind,
            "id": record_id,
            "path": published.rel,
            "sha256": published.sha256,
            "keys": keys,
        }
        line = _native.ledger_append(str(self.root), LEDGER, jsonio.canonical(entry))
        return LedgerLine.model_validate_json(line)

    def ledger(self) -> list[LedgerLine]:
        """Every complete ledger line, in order; a torn last line is ignored."""
        if not self.exists(LEDGER):
            return []
        data = self.read_bytes(LEDGER, max_bytes=1 << 34)
        parts = data.split(b"\n")
        out = []
        for number, raw in enumerate(parts[:-1], start=1):
            try:
                out.append(
                    jsonio.load(LedgerLine, raw, what="ledger line", max_bytes=jsonio.MAX_RECORD_BYTES)
                )
            except InputError as exc:
                raise InputError(
                    "ledger_corrupt", f"ledger line {number} is invalid: {exc.message}", path=LEDGER
                ) from None
        return out

    def require_store(self) -> None:
        """Refuses a folder that is not an artifact root (``not_a_store``): one holds ``target.json`` or
        ``ledger/records.jsonl`` (a root whose Target or ledger was lost keeps the other)."""
        if self.exists("target.json") or self.exists(LEDGER):
            return
        empty = not any(self.root.iterdir())
        raise InputError(
            "not_a_store",
            f"{self.root} is {'an empty folder' if empty else 'not a gpuopt store'}: a store (artifact "
            "root) is the folder `gpuopt readiness check` creates, holding target.json (the Target), "
            "ledger/records.jsonl (one line per published record), objects/ (frozen trees and their blobs), "
            "invocations/ and keys/",
            path=str(self.root),
            expected="target.json and ledger/records.jsonl",
            observed="an empty folder" if empty else "neither",
        )

    # ---- refs ------------------------------------------------------------------------------------------

    def target_ref(self) -> RecordRef:
        """The Target's ref, read from ``target.json`` (its id and file hash)."""
        data = self.read_bytes("target.json")
        value = jsonio.parse(data, max_bytes=jsonio.MAX_RECORD_BYTES)
        return RecordRef(id=str(value.get("id")), sha256=jsonio.sha256_hex(data))
