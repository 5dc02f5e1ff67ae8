"""Reading small compiler reports as text, with the errors the CLI contract asks for."""

from __future__ import annotations

import os
from pathlib import Path

from gpuopt._files import read_bounded
from gpuopt.errors import FormatError


def read_text(path_or_text: str | os.PathLike[str] | bytes, what: str) -> tuple[str, Path | None]:
    """The report's text and its path (None for text given directly). Binary bytes are a FormatError."""
    if isinstance(path_or_text, bytes):
        data, path = path_or_text, None
    elif isinstance(path_or_text, str) and "\n" in path_or_text:
        return path_or_text, None
    else:
        path = Path(path_or_text)
        data = read_bounded(path, what)
    if b"\x00" in data:
        raise FormatError(
            "format_invalid",
            f"the {what} holds binary data",
            path=None if path is None else str(path),
            expected=f"{what} text",
        )
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError as exc:
        raise FormatError(
            "format_invalid",
            f"the {what} is not UTF-8 text: {exc}",
            path=None if path is None else str(path),
            expected=f"{what} text",
        ) from exc
