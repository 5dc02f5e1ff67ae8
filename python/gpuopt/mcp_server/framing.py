"""The stdio channel's framing: one JSON-RPC message per line, each at most ``MESSAGE_CAP_BYTES``.

Bytes are split as they arrive, so a line longer than the cap is counted, never held whole: only its first
``PREFIX_BYTES`` are kept (enough to find the ``id`` of a request whose ``params`` are huge) and the rest
is dropped up to the next newline. Memory stays at most one cap plus one read.
"""

from __future__ import annotations

from dataclasses import dataclass

MESSAGE_CAP_BYTES = 16 * 1024 * 1024  # 16 MiB per message, the newline excluded (references/agents.md)
PREFIX_BYTES = 64 * 1024


@dataclass(frozen=True)
class Oversized:
    """A line over the cap: its length in bytes and its first ``PREFIX_BYTES``."""

    size_bytes: int
    prefix: bytes


class Lines:
    """Splits a byte stream into lines (``bytes``, without the newline) and ``Oversized`` markers."""

    def __init__(self, cap_bytes: int = MESSAGE_CAP_BYTES) -> None:
        self.cap_bytes = cap_bytes
        self._line = bytearray()
        self._prefix: bytes | None = None  # set while dropping an oversized line
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The lines that ``chunk`` completes."""
        done: list[bytes | Oversized] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            self._take(chunk[start : len(chunk) if newline < 0 else newline])
            if newline < 0:
                return done
            done.append(self._finish())
            start = newline + 1

    def close(self) -> list[bytes | Oversized]:
        """At end of input: a last line that has no newline, if any."""
        pending = self._prefix is not None or bool(self._line)
        return [self._finish()] if pending else []

    def _take(self, piece: bytes) -> None:
        if self._prefix is not None:
            self._dropped += len(piece)
            return
        self._line += piece
        if len(self._line) > self.cap_bytes:
            self._prefix = bytes(self._line[:PREFIX_BYTES])
            self._dropped = len(self._line)
            self._line = bytearray()

    def _finish(self) -> bytes | Oversized:
        if self._prefix is not None:
            over = Oversized(self._dropped, self._prefix)
            self._prefix, self._dropped = None, 0
            return over
        line = bytes(self._line)
        self._line.clear()
        return line
