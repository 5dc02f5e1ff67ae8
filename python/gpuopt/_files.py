"""Reading an input file the CLI contract's way: regular files only, never more than a cap.

A FIFO, a character device (``/dev/zero``) or a directory given as an input answers ``not_a_file``
at once instead of blocking or growing memory without bound; a regular file past the cap answers
``input_too_large`` before it is read. Every whole-input read in the Python layer goes through here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from gpuopt.errors import InputError

#: The default cap on one whole-input read (text reports, metadata, XML): far above any real one.
DEFAULT_MAX_BYTES = 256 * 1024 * 1024


def regular_size(path: Path) -> int:
    """The size of ``path``, which must be a regular file (symlinks followed)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise InputError("file_not_found", f"{path}: no such file", path=str(path)) from None
    except OSError as exc:
        raise InputError("file_unreadable", f"{path}: {exc.strerror or exc}", path=str(path)) from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise InputError(
            "not_a_file",
            f"{path} is {kind}",
            path=str(path),
            expected="a regular file",
            observed=_kind(st.st_mode),
        )
    return st.st_size


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def _too_large(path: str | None, what: str, limit: int, observed: str) -> InputError:
    return InputError(
        "input_too_large",
        f"the {what} is larger than gpuopt reads ({limit} bytes)",
        path=path,
        expected=f"at most {limit} bytes",
        observed=observed,
    )


def read_bounded(path: str | os.PathLike[str], what: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (checked before and while reading)."""
    p = Path(path)
    size = regular_size(p)
    if size > limit:
        raise _too_large(str(p), what, limit, f"{size} bytes")
    try:
        with p.open("rb") as fh:
            data = fh.read(limit + 1)
    except IsADirectoryError:
        raise InputError("not_a_file", f"{p} is a directory", path=str(p)) from None
    except OSError as exc:
        raise InputError("file_unreadable", f"{p}: {exc.strerror or exc}", path=str(p)) from None
    if len(data) > limit:  # it grew while read
        raise _too_large(str(p), what, limit, f"more than {limit} bytes")
    return data


def read_stream_bounded(stream: BinaryIO, what: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """At most ``limit`` bytes of a binary stream (stdin); more is ``input_too_large``."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _too_large(None, what, limit, f"more than {limit} bytes")
    return data
