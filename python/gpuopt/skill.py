"""The agent skill that ships inside the package: ``SKILL.md`` and the command reference it links.

``SKILL.md`` lives at the repository root (where people and agents read it) and, byte for byte, as
package data in ``gpuopt/_skill_files/`` (what a pip-installed gpuopt has); a test keeps the two equal. The
reference it links, ``references/cli.md``, is generated from the click commands on install, so an
installed skill always describes the installed CLI.

Installing never writes through a symbolic link below the target folder (every folder and file is opened
relative to its parent's descriptor with ``O_NOFOLLOW``) and never overwrites a file with other content
unless asked (``force``); a file that already holds the same bytes is left alone.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuopt.errors import InputError

# A skill file larger than this is not one gpuopt wrote: it is compared no further than that.
_MAX_COMPARED_BYTES = 16 << 20


@dataclass(frozen=True)
class Installed:
    """What :func:`install` did: the files it wrote and those that already held the same bytes."""

    written: list[Path]
    unchanged: list[Path]


def text() -> str:
    """The shipped SKILL.md."""
    return resources.files("gpuopt").joinpath("_skill_files").joinpath("SKILL.md").read_text(encoding="utf-8")


def files() -> dict[str, str]:
    """Relative path -> content of every file the skill consists of."""
    from gpuopt.cli._reference import render

    return {"SKILL.md": text(), "references/cli.md": render()}


def install(directory: Path, *, force: bool = False) -> Installed:
    """Writes the skill into ``directory`` (e.g. ``.claude/skills/gpuopt``).

    ``skill_path_is_link`` when a folder or file below ``directory`` is a symbolic link,
    ``skill_file_exists`` when a file holds other content and ``force`` is off, ``skill_dir_unwritable``
    when the OS refuses."""
    written: list[Path] = []
    unchanged: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        top = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _unwritable(directory, exc) from None
    try:
        for relative, content in files().items():
            target = directory / relative
            if _place(top, directory, relative, content.encode("utf-8"), force=force):
                written.append(target)
            else:
                unchanged.append(target)
    finally:
        os.close(top)
    return Installed(written, unchanged)


def _place(top: int, directory: Path, relative: str, data: bytes, *, force: bool) -> bool:
    """Writes one file below ``top``; False when it already held ``data``."""
    *folders, name = relative.split("/")
    fd = os.dup(top)
    here = directory
    try:
        for folder in folders:
            here = here / folder
            parent = fd
            fd = _open_folder(parent, folder, here)
            os.close(parent)
        return _write_file(fd, name, here / name, data, force=force)
    finally:
        os.close(fd)


def _open_folder(parent: int, name: str, shown: Path) -> int:
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
    except FileExistsError:
        pass
    except OSError as exc:
        raise _unwritable(shown, exc) from None
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(parent, name):
            raise _link(shown) from None
        raise _unwritable(shown, exc) from None


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _write_file(folder: int, name: str, shown: Path, data: bytes, *, force: bool) -> bool:
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _unwritable(shown, exc) from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise _link(shown)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(
                "skill_file_exists",
                f"{shown} exists and is not a regular file",
                path=str(shown),
                expected="a regular file or nothing",
            )
        if _same_bytes(folder, name, shown, data, st.st_size):
            return False
        if not force:
            raise InputError(
                "skill_file_exists",
                f"{shown} exists with other content; pass --force to overwrite it",
                path=str(shown),
                expected="no file, the same content, or --force",
            )
    tmp = f".{name}.tmp-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        out = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=folder
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            os.fsync(out)
        finally:
            os.close(out)
        if st is None:  # a file that appeared meanwhile is never replaced: link() refuses an existing name
            os.link(tmp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            os.unlink(tmp, dir_fd=folder)
        else:  # rename replaces the name itself, never what a link there would point to
            os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except FileExistsError:
        _discard(folder, tmp)
        raise InputError(
            "skill_file_exists",
            f"{shown} appeared while the skill was installed",
            path=str(shown),
            expected="no file, the same content, or --force",
        ) from None
    except OSError as exc:
        _discard(folder, tmp)
        raise _unwritable(shown, exc) from None
    return True


def _same_bytes(folder: int, name: str, shown: Path, data: bytes, size: int) -> bool:
    if size != len(data) or size > _MAX_COMPARED_BYTES:
        return False
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except OSError as exc:
        raise _unwritable(shown, exc) from None
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(size + 1) == data
    finally:
        os.close(fd)


def _discard(folder: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=folder)


def _link(shown: Path) -> InputError:
    return InputError(
        "skill_path_is_link",
        f"{shown} is a symbolic link: the skill is never written through one",
        path=str(shown),
        expected="a real folder or file (or nothing) below the install folder",
    )


def _unwritable(shown: Path, exc: OSError) -> InputError:
    return InputError(
        "skill_dir_unwritable",
        f"cannot write the skill into {shown}: {exc.strerror or exc}",
        path=str(shown),
    )
