"""Opening files the CLI contract's way: one rule for every input and output of the Python layer.

Inputs: regular files only (symlinks followed), opened non-blocking and checked on the open descriptor,
so a FIFO, a character device (``/dev/zero``) or a directory answers ``not_a_file`` at once instead of
blocking or growing memory without bound, even when swapped in after a check; a whole-input read past
its cap answers ``input_too_large`` before memory grows. The Rust engines apply the same rule
(``rust/src/identity``: ``open_regular``, ``read_regular``). Outputs (``--out``, ``--html``): an
existing path must be a regular file (a FIFO would block the writer), the file is written next to its
target and renamed into place, so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
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


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (the type checked on the open descriptor)."""
    p = Path(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(p, flags)
    except FileNotFoundError:
        raise InputError("file_not_found", f"{p}: no such file", path=str(p)) from None
    except OSError as exc:
        raise InputError("file_unreadable", f"{p}: {exc.strerror or exc}", path=str(p)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise InputError(
            "not_a_file", f"{p} is {kind}", path=str(p), expected="a regular file", observed=_kind(mode)
        )
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_head(path: str | os.PathLike[str], n: int) -> bytes:
    """The first ``n`` bytes of a regular file (to tell its format)."""
    with open_regular(path) as fh:
        return fh.read(n)


def read_bounded(path: str | os.PathLike[str], what: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (checked before and while reading)."""
    p = Path(path)
    with open_regular(p) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise _too_large(str(p), what, limit, f"{size} bytes")
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise InputError("file_unreadable", f"{p}: {exc.strerror or exc}", path=str(p)) from None
    if len(data) > limit:  # it grew while read
        raise _too_large(str(p), what, limit, f"more than {limit} bytes")
    return data


def check_output(path: str | os.PathLike[str], *, reads: Sequence[str | os.PathLike[str]] = ()) -> Path:
    """An output path gpuopt may write: its folder exists and, if it exists, it is a regular file that
    is none of the files ``reads`` (the inputs of the work that writes it) through any name."""
    p = Path(path)
    text = os.fspath(path)
    if isinstance(text, str) and text.endswith(os.sep) and p.name:
        # pathlib drops a trailing slash: `x.parquet/` named a folder and wrote the file `x.parquet`.
        raise InputError(
            "output_not_a_file",
            f"{text} ends with {os.sep}, so it names a folder: gpuopt writes outputs as regular files only",
            path=text,
            expected="a file path, without a trailing slash",
            observed="a path ending with a slash",
        )
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError("output_unwritable", f"{p}: {exc.strerror or exc}", path=str(p)) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise InputError(
            "output_not_a_file",
            f"{p} exists and is not a regular file: gpuopt writes outputs as regular files only",
            path=str(p),
            expected="a new path or a regular file",
            observed=_kind(st.st_mode),
        )
    if st is not None:
        _refuse_replacing_a_record(p, st)
        refuse_replacing_an_input(p, reads)
    if not p.parent.is_dir():
        raise InputError(
            "output_folder_missing",
            f"{p.parent} does not exist",
            path=str(p),
            expected="an existing folder",
            observed=str(p.parent),
        )
    return p


def file_key(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The (device, inode) of the regular file at ``path``, the same through any name (a link, another
    spelling); None for anything else or nothing there."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def refuse_replacing_an_input(p: Path, reads: Sequence[str | os.PathLike[str]]) -> None:
    """``output_is_input`` where the existing regular file ``p`` is one of ``reads``: outputs are renamed
    over their path, so an output that was an input (by any name: a link, another path) replaced the
    file being read (``--out t.json`` of ``t.json``)."""
    key = file_key(p)
    if key is None:
        return
    for source in reads:
        if file_key(source) == key:
            same = os.fspath(source) == os.fspath(p)
            raise InputError(
                "output_is_input",
                f"{p} is {'an input' if same else f'the same file as the input {os.fspath(source)}'} of this "
                "command: writing it would replace what the command reads",
                path=str(p),
                expected="an output path other than every input",
                observed="an input" if same else f"the same file as {os.fspath(source)}",
            )


#: What marks an artifact root here: its Target and its ledger (both, so that a project folder that
#: merely holds a ``target.json`` of its own is not taken for one).
_ROOT_MARKS = ("target.json", "ledger/records.jsonl")


def _among_records(p: Path) -> bool:
    """Whether ``p`` is a store's Target or lies in one of a store's folders (ledger, objects,
    invocations, gates, ...): an artifact root is its folder's parent or one above it."""
    resolved = p.resolve()
    for depth, folder in enumerate(resolved.parents):
        if all((folder / mark).is_file() for mark in _ROOT_MARKS):
            return depth > 0 or resolved.name == "target.json"
    return False


def _refuse_replacing_a_record(p: Path, st: os.stat_result) -> None:
    """An output never replaces a read-only file (a store writes its records once, read-only: a rename
    over them would go round that), nor a store's Target or any file in a store's folders: a trial found
    ``handoff ROOT --out ROOT/target.json`` and ``--junit`` on a gate record replaced them, exit 0. New
    files in a root, and its own top-level outputs (``handoff.draft.md``), are allowed."""
    inside = _among_records(p)
    if st.st_mode & 0o222 == 0 or inside:
        why = "a store's record" if inside else "read-only"
        raise InputError(
            "output_is_a_record",
            f"{p} exists and is {why}: gpuopt does not replace it with an output",
            path=str(p),
            expected="a new path, or a writable file outside a store's records",
            observed=why,
        )


def write_output(path: str | os.PathLike[str], data: bytes) -> None:
    """Writes ``data`` to ``path`` (see :func:`check_output`) through a temporary file and a rename."""
    p = check_output(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, p)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        # The new content is written beside the output, then renamed over it: say so, since the error
        # may be about the temporary file (a folder such as /proc/self takes no new files).
        raise InputError(
            "output_unwritable",
            f"{p}: cannot write it through a new file in {p.parent} ({exc.strerror or exc})",
            path=str(p),
            expected="a folder gpuopt may create files in",
        ) from None


def read_stream_bounded(stream: BinaryIO, what: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """At most ``limit`` bytes of a binary stream (stdin); more is ``input_too_large``."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise _too_large(None, what, limit, f"more than {limit} bytes")
    return data
