"""The one exception hierarchy of gpuopt, shared by the native engines and the Python layer.

Every error carries a stable machine ``code`` (what callers switch on) and the exit status the CLI uses:
2 for bad input or a contract violation, 3 when a needed tool or hardware is absent, 1 for a defect in
gpuopt itself. Native errors arrive through :func:`from_native`, which the Rust boundary calls.
"""

from __future__ import annotations

import unicodedata
from typing import Any


class GpuoptError(Exception):
    """Base of every error gpuopt raises on purpose."""

    exit_code = 1

    def __init__(
        self,
        code: str,
        message: str,
        *,
        path: str | None = None,
        expected: str | None = None,
        observed: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.expected = expected
        self.observed = observed

    def __str__(self) -> str:
        return f"{self.message} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        """The error as the envelope's ``errors`` item: ``{code, message, path?, expected?, observed?}``."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("path", "expected", "observed"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class InputError(GpuoptError, ValueError):
    """Bad input or a contract violation: unreadable, truncated, garbage or unsupported data (exit 2)."""

    exit_code = 2


class FormatError(InputError):
    """A file is not in the format it claims, or is damaged (truncated, garbage)."""


class UnsupportedVersionError(InputError):
    """A file's format or tool version is one gpuopt does not model; it fails closed."""


class AbsentError(GpuoptError):
    """A needed external tool or hardware is absent (exit 3)."""

    exit_code = 3


class ToolAbsentError(AbsentError):
    """An external program (nsys, ncu, cuobjdump, ...) was not found."""


def missing_package(exc: ModuleNotFoundError) -> str | None:
    """The top-level package an import failed on, unless it is gpuopt's own (a broken install's defect)."""
    package = (exc.name or "").partition(".")[0]
    return None if package in ("", "gpuopt") else package


def dependency_missing(package: str, exc: ModuleNotFoundError) -> AbsentError:
    """A package gpuopt imports is not installed (a broken install, not bad input): exit 3, named."""
    return AbsentError(
        "dependency_missing",
        f"the Python package '{package}' that gpuopt needs is not installed ({exc})",
        expected=f"pip install {package} (or reinstall gpuopt with its dependencies)",
    )


class InternalError(GpuoptError, RuntimeError):
    """A defect in gpuopt itself, including a caught panic in the native engine (exit 1)."""

    exit_code = 1


# Codes whose native errors map onto a more specific class than their kind alone gives.
_CLASS_BY_CODE: dict[str, type[GpuoptError]] = {
    "format_invalid": FormatError,
    "file_truncated": FormatError,
    "version_unsupported": UnsupportedVersionError,
    "tool_absent": ToolAbsentError,
}

_CLASS_BY_KIND: dict[str, type[GpuoptError]] = {
    "input": InputError,
    "absent": AbsentError,
    "internal": InternalError,
}


def from_native(
    kind: str,
    code: str,
    message: str,
    *,
    path: str | None = None,
    expected: str | None = None,
    observed: str | None = None,
) -> GpuoptError:
    """Builds the exception for an error raised by the Rust engine (called from ``rust/src/py``)."""
    cls = _CLASS_BY_CODE.get(code) or _CLASS_BY_KIND.get(kind, InternalError)
    return cls(code, message, path=path, expected=expected, observed=observed)


def shape_of(data: bytes | str) -> str:
    """How an error describes input it does not print: ``"24 bytes of text"`` (the same words as the
    native ``shape::of``). An error names the file, the position and the expected shape, never the file's
    own bytes: a mistaken path (a credentials file, a ``.env``) must not be echoed to a terminal, a log or
    an agent."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if not raw:
        return "nothing"
    unit = "byte" if len(raw) == 1 else "bytes"
    return f"{len(raw)} {unit} of {_kind_of(raw)}"


def _kind_of(head: bytes) -> str:
    if head.startswith(b"\x1f\x8b"):
        return "gzip data"
    if head.startswith(b"PK\x03\x04"):
        return "a ZIP archive"
    if head.startswith(b"\x7fELF"):
        return "an ELF binary"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end < len(head) or exc.reason != "unexpected end of data":
            return "binary data"
        text = head[: exc.start].decode("utf-8")
    if any(unicodedata.category(c) == "Cc" and c not in "\t\r\n" for c in text):
        return "binary data"
    first = text.lstrip()[:1]
    return {"{": "JSON-like text", "[": "JSON-like text", "<": "XML-like text"}.get(first, "text")
