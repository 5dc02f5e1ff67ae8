"""File identity without a model: size and BLAKE3 as the native ``identity`` module computes them, cached
per (device, inode, size, mtime_ns, ctime_ns) in the user's cache folder (``GPUOPT_CACHE_DIR`` overrides
it; set it empty for no cache), started in the background so that hashing overlaps a command's reading.

The digest must be of the bytes the command parsed. A command notes each input's version (the five
numbers) when it starts (:func:`touch`, called for every file argument by ``cli._output.command``); the
identity is accepted only when the version hashed, the version noted and the version on disk when the
identity is taken are one and the same, else ``file_changed_during_read`` (exit 2): a file appended to
while it was read is never reported with the appended file's digest.

:mod:`gpuopt.provenance` wraps these plain dicts in ``FileIdentity``; a command that prints its
envelope natively (``gpuopt nsys stats --json``) uses them as they are, without importing pydantic.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from gpuopt import _native
from gpuopt.errors import InputError

CACHE_ENV = "GPUOPT_CACHE_DIR"


class IdentityCacheWarning(UserWarning):
    """The identity cache could not be read or written; the file was hashed instead (never fatal)."""


def cache_dir() -> Path | None:
    """Where identities are cached: ``$GPUOPT_CACHE_DIR``, else the platform's user cache folder."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit is not None:
        return Path(explicit) if explicit else None
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "gpuopt"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "gpuopt"


def _identify(path: str) -> tuple[dict[str, Any], list[str], str]:
    folder = cache_dir()
    raw = json.loads(_native.file_identity_json(path, None if folder is None else str(folder)))
    return raw["identity"], list(raw["warnings"]), str(raw["version"])


#: Within a command (:func:`scope`): the version of each input noted when it started (path as given ->
#: dev-ino-size-mtime-ctime). Outside one (a library call) nothing is noted.
_SCOPE: ContextVar[dict[str, str] | None] = ContextVar("gpuopt_identity_scope", default=None)


@contextmanager
def scope() -> Iterator[None]:
    """One command's inputs: versions noted by :func:`touch` hold until the command ends."""
    token = _SCOPE.set({})
    try:
        yield
    finally:
        _SCOPE.reset(token)


def version_of(path: str) -> str:
    """``dev-ino-size-mtime_ns-ctime_ns``: what changes when a file is rewritten or appended to."""
    st = os.stat(path)
    return f"{st.st_dev}-{st.st_ino}-{st.st_size}-{st.st_mtime_ns}-{st.st_ctime_ns}"


def touch(path: str | os.PathLike[str]) -> None:
    """Notes the version of a regular file the command is about to read (the first note stands)."""
    noted, key = _SCOPE.get(), str(path)
    if noted is None or key in noted:
        return
    try:
        if os.path.isfile(key):
            noted[key] = version_of(key)
    except (OSError, ValueError):
        return


def _checked(path: str, hashed: str, before: str | None = None) -> None:
    """The version hashed is the version noted first (at the command's start, or ``before``) and the
    version on disk now."""
    try:
        now: str | None = version_of(path)
    except OSError:
        now = None
    noted = _SCOPE.get() or {}
    first = noted.get(path) or before or hashed
    if not (hashed == first == now):
        raise InputError(
            "file_changed_during_read",
            f"{path} changed while it was being read",
            path=path,
            expected=f"one version of the file (dev-ino-size-mtime_ns-ctime_ns {first})",
            observed="gone" if now is None else f"now {now}, hashed {hashed}",
        )


def _finish(identity: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    for note in notes:
        warnings.warn(note, IdentityCacheWarning, stacklevel=4)
    return identity


def identity(path: str | Path) -> dict[str, Any]:
    """``{path, size_bytes, blake3, from_cache}`` of a regular file: the background result started by
    :func:`identify_in_background` for this path, else computed now (cached, or hashed natively)."""
    pending = _PENDING.pop(str(path), None)
    if pending is not None:
        return pending.result()
    found, notes, version = _identify(str(path))
    _checked(str(path), version)
    return _finish(found, notes)


def stat_key(path: str) -> tuple[int, int, int, int, int]:
    """(device, inode, size, mtime_ns, ctime_ns): what changes when a file is rewritten."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def check_unchanged(path: str, before: tuple[int, ...]) -> None:
    """Raises ``file_changed_during_read`` when ``path`` no longer has the stat key ``before``."""
    try:
        after: tuple[int, ...] | None = stat_key(path)
    except OSError:
        after = None
    if after != before:
        raise InputError(
            "file_changed_during_read",
            f"{path} changed while it was being read",
            path=path,
            expected=f"(dev, inode, size, mtime_ns, ctime_ns) = {before}",
            observed="gone" if after is None else str(after),
        )


class _Pending:
    """One identity being computed on a thread while the command reads the same file."""

    def __init__(self, path: str) -> None:
        self.path = path
        touch(path)
        self.before = version_of(path)
        self.outcome: tuple[dict[str, Any], list[str], str] | BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=f"identity {path}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.outcome = _identify(self.path)
        except BaseException as exc:  # handed to the caller of result()
            self.outcome = exc

    def result(self) -> dict[str, Any]:
        self.thread.join()
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        if self.outcome is None:
            raise RuntimeError(f"the identity thread for {self.path} ended without a result")
        found, notes, version = self.outcome
        _checked(self.path, version, self.before)
        return _finish(found, notes)


_PENDING: dict[str, _Pending] = {}


def identify_in_background(path: str | Path) -> None:
    """Starts the identity of ``path`` now; :func:`identity` of the same path joins it later.

    Does nothing for a path that is not a regular file (the engine reports that with its own error).
    """
    key = str(path)
    if key in _PENDING or not os.path.isfile(key):
        return
    try:
        _PENDING[key] = _Pending(key)
    except OSError:
        return
