"""The stdio transport of ``gpuopt mcp``, in place of the SDK's ``stdio_server`` (references/agents.md: why).

- stdin is read in 64 KiB pieces by a daemon thread and framed by ``framing.Lines`` (16 MiB per message);
  each line is judged by ``jsonrpc.classify``: valid messages go to the SDK, every invalid one gets its
  JSON-RPC error written back here, and the thread waits while the SDK is busy (no unbounded queue).
- stdout is written by another daemon thread; a broken pipe (the client went away) ends the session like
  end of input does, and later replies are dropped. A message that cannot be encoded (a lone surrogate
  from somewhere) is replaced by an internal-error reply to its request.
- While serving, fd 0 reads the null device and fd 1 writes to stderr, so nothing else in this process can
  read the channel or corrupt it; both are restored on exit.
- End of input, a broken pipe, SIGINT and SIGTERM all end the session the same way: the SDK sees end of
  input and cancels the calls in flight (``calls.run_cli`` stops their processes), replies already made are
  flushed (for at most ``FLUSH_S``), and the server exits 0.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import queue
import select
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR

from gpuopt.mcp_server.framing import Lines, Oversized
from gpuopt.mcp_server.jsonrpc import Refusal, classify

READ_BYTES = 64 * 1024
FLUSH_S = 5.0  # how long replies already made may take to reach a client that still reads
_PENDING_WRITES = 4
_IDLE_POLL_S = 0.5  # how often an idle writer looks whether the client closed its end
_END = object()


class _Reader:
    """The stdin thread: bytes -> lines -> messages or refusals, handed to the event loop one at a time."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self.fd = fd
        self.loop = loop
        self.inbox: asyncio.Queue[Any] = asyncio.Queue(maxsize=1)
        threading.Thread(target=self._pump, name="gpuopt-mcp-stdin", daemon=True).start()

    def _hand_over(self, item: object) -> bool:
        try:
            asyncio.run_coroutine_threadsafe(self.inbox.put(item), self.loop).result()
        except (RuntimeError, concurrent.futures.CancelledError):  # the loop is closed or closing
            return False
        return True

    def _pump(self) -> None:
        lines = Lines()
        while True:
            try:
                chunk = os.read(self.fd, READ_BYTES)
            except OSError:
                chunk = b""
            for line in lines.feed(chunk) if chunk else lines.close():
                judged = _judge(line)
                if judged is not None and not self._hand_over(judged):
                    return
            if not chunk:
                self._hand_over(_END)
                return


def _judge(line: bytes | Oversized) -> Any:
    try:
        return classify(line)
    except Exception as exc:  # a defect here must cost one message, not the channel
        return Refusal(None, INTERNAL_ERROR, f"internal error reading a message ({type(exc).__name__})")


class _Writer:
    """The stdout thread: whole lines written in order; at most ``_PENDING_WRITES`` waiting."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, on_broken: Callable[[], None]) -> None:
        self.fd = fd
        self.loop = loop
        self.on_broken = on_broken
        self.room = asyncio.Semaphore(_PENDING_WRITES)
        self.lines: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.broken = asyncio.Event()
        self.flushed = asyncio.Event()
        threading.Thread(target=self._pump, name="gpuopt-mcp-stdout", daemon=True).start()

    async def write(self, line: bytes) -> None:
        if self.broken.is_set():
            return
        await self.room.acquire()
        self.lines.put(line)

    async def flush(self) -> None:
        if not self.broken.is_set():
            self.lines.put(None)
            with anyio.move_on_after(FLUSH_S):
                await self.flushed.wait()

    def _broke(self) -> None:
        self.broken.set()
        self.on_broken()

    def _tell(self, callback: Callable[[], None]) -> bool:
        try:
            self.loop.call_soon_threadsafe(callback)
        except RuntimeError:  # the loop is closed
            return False
        return True

    def _pump(self) -> None:
        # While idle, a client that closed its end of our stdout (but not its end of our stdin) is seen
        # as an error on the descriptor: the call in flight is then stopped, not run on for nobody.
        poller = select.poll()
        poller.register(self.fd, 0)  # POLLERR and POLLHUP are always reported
        while True:
            try:
                line = self.lines.get(timeout=_IDLE_POLL_S)
            except queue.Empty:
                if any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0)):
                    self._tell(self._broke)
                    return
                continue
            if line is None:
                break
            view = memoryview(line)
            try:
                while view:
                    view = view[os.write(self.fd, view) :]
            except OSError:  # EPIPE and the like: nobody reads any more
                self._tell(self._broke)
                return
            if not self._tell(self.room.release):
                return
        self._tell(self.flushed.set)


def _encode(message: SessionMessage) -> bytes | None:
    """One line of UTF-8 JSON; a reply that cannot be encoded becomes an internal error for its request."""
    try:
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
        return (text + "\n").encode("utf-8")
    except (ValueError, UnicodeError):
        request_id = getattr(message.message, "id", None)
        if request_id is None:
            return None  # a notification: nobody waits for it
        error = types.ErrorData(code=INTERNAL_ERROR, message="the reply could not be encoded as UTF-8 JSON")
        reply = types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return (reply.model_dump_json(by_alias=True) + "\n").encode("utf-8")


class _Wires:
    """Private copies of fds 0 and 1 for the channel; fd 0 then reads /dev/null and fd 1 writes to stderr."""

    def __init__(self) -> None:
        self.read_fd = os.dup(0)
        self.write_fd = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        try:
            os.dup2(2, 1)
        except OSError:  # no stderr either
            sink = os.open(os.devnull, os.O_WRONLY)
            os.dup2(sink, 1)
            os.close(sink)

    def restore(self) -> None:
        # What a stray print left in sys.stdout's buffer belongs to stderr, not to the channel.
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        # The private copies stay open: a daemon thread may still be blocked on one of them.
        with contextlib.suppress(OSError):
            os.dup2(self.read_fd, 0)
            os.dup2(self.write_fd, 1)


@contextlib.asynccontextmanager
async def stdio_channel() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The (read, write) streams that ``Server.run`` takes, served over this process's stdin and stdout."""
    loop = asyncio.get_running_loop()
    wires = _Wires()
    reading = anyio.CancelScope()
    reader, writer = _Reader(wires.read_fd, loop), _Writer(wires.write_fd, loop, reading.cancel)
    to_sdk, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, from_sdk = anyio.create_memory_object_stream[SessionMessage](0)
    refusals = to_client.clone()

    async def read() -> None:
        with reading, contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async with to_sdk, refusals:
                while (item := await reader.inbox.get()) is not _END:
                    if isinstance(item, Refusal):
                        await refusals.send(SessionMessage(item.reply()))
                    else:
                        await to_sdk.send(SessionMessage(item))

    async def write() -> None:
        async with from_sdk:
            async for message in from_sdk:
                line = _encode(message)
                if line is not None:
                    await writer.write(line)

    signals = _on_signals(loop, reading.cancel)
    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield from_client, to_client
            finally:
                reading.cancel()
                to_client.close()
                # Replies still queued get FLUSH_S to go out; a client that stopped reading gets none.
                tasks.cancel_scope.deadline = anyio.current_time() + FLUSH_S
        await writer.flush()
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)
        wires.restore()


def _on_signals(loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> list[signal.Signals]:
    """SIGINT and SIGTERM end the session like end of input (where the loop can watch signals)."""
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
            handled.append(sig)
    return handled
