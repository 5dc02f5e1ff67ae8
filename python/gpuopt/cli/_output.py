"""The CLI contract in one place: ``--json`` envelopes, human rendering, errors and exit codes.

Commands are thin: options -> library call -> :class:`Outcome` -> :func:`command` emits it. A
``GpuoptError`` becomes an envelope with its code and the error's exit status (2 input, 3 absent); any
other exception is an internal error (exit 1) whose traceback is shown only with ``gpuopt --debug``.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import traceback
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from gpuopt.cli._progress import working
from gpuopt.errors import (
    GpuoptError,
    InputError,
    InternalError,
    dependency_missing,
    missing_package,
)

if TYPE_CHECKING:  # pydantic is imported when a command runs, never for --help
    from pydantic import BaseModel

    from gpuopt.models.envelope import ErrorItem, FileIdentity, UnmodeledItem

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Outcome:
    """What a command produced: its data, the input files it read, what it saw but did not model."""

    # None only with ``json_text``.
    data: BaseModel | None
    render: Callable[[], str]
    inputs: list[FileIdentity] = field(default_factory=list)
    unmodeled: list[UnmodeledItem] = field(default_factory=list)
    # A result that is itself a failure (a corrupt store, a lost invocation): the data is still shown, the
    # envelope says ``ok: false`` with this error, and the command exits with its status.
    failure: GpuoptError | None = None
    # The envelope schema when it is not the command's own (several files: ``gpuopt.many.table/v1``).
    schema: str | None = None
    # The whole --json envelope, already made by the command (natively, as pydantic would print it:
    # ``gpuopt nsys stats``), printed as is; such an outcome has no ``data``.
    json_text: str | None = None
    # A result whose documented exit status is not 0 although the command worked (``gpuopt gate check``'s
    # outcomes: references/gate.md); the envelope stays ``ok: true``.
    exit_code: int = 0


_AS_JSON: ContextVar[bool] = ContextVar("gpuopt_as_json", default=False)


def json_requested() -> bool:
    """True while a command runs with ``--json`` (a command may then make its envelope itself)."""
    return _AS_JSON.get()


def _debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    return bool(root and isinstance(root.obj, dict) and root.obj.get("debug"))


def emit_envelope(
    schema: str,
    *,
    ok: bool,
    data: BaseModel | None,
    errors: list[ErrorItem],
    inputs: list[FileIdentity],
    unmodeled: list[UnmodeledItem],
) -> None:
    from pydantic_core import PydanticSerializationError

    from gpuopt.provenance import provenance
    from gpuopt.schemas import ENVELOPES

    envelope = ENVELOPES[schema](
        schema=schema,
        ok=ok,
        data=data,
        errors=errors,
        unmodeled=unmodeled,
        provenance=provenance(inputs),
    )
    try:
        text = envelope.model_dump_json(by_alias=True, indent=2)
    except PydanticSerializationError:  # a non-UTF-8 file name (surrogate-escaped) in a path or message
        text = json.dumps(_printable(envelope.model_dump(mode="json", by_alias=True)), indent=2)
    emit(text, json_text=True)


#: Control characters but newline and tab. gpuopt writes no colour or cursor sequence of its own on stdout
#: (tables are rendered without colour; the spinner is on stderr), so every one of them in ``emit``'s
#: text came from a file: a name `g\x1b]0;PWNED\x07` retitled the terminal, `\x1b[8m` hid what followed.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str, *, json_text: bool = False) -> str:
    """``text`` with its control characters but newlines and tabs written as escapes (``\\x1b``): what a
    file holds must not drive the terminal. In a JSON document, as JSON escapes (``\\u009b``): its writers
    escape only U+0000..U+001F, and a ``\\x`` escape would make the document invalid."""
    if json_text:
        return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def emit(text: str, *, json_text: bool = False) -> None:
    """``text`` and a newline on stdout, all of it or an error. Python's text stream over an unbuffered
    stdout (``PYTHONUNBUFFERED``, ``-u``) drops what a short write leaves: a full disk or a file-size
    limit cut the document and the command still exited 0. The bytes are written here until all are
    out; a failure is ``output_unwritable`` on stderr, exit 2. A reader that went away (``| head``) ends
    the output quietly, as before."""
    import io
    import os

    text = terminal_safe(text, json_text=json_text)
    stream = sys.stdout
    try:
        stream.flush()
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):  # not a real descriptor
        click.echo(text)
        return
    # A lone surrogate (a file name that is not UTF-8) is written \udcNN rather than failing the whole output.
    errors = stream.errors if stream.errors and stream.errors != "strict" else "backslashreplace"
    view = memoryview((text + "\n").encode(stream.encoding or "utf-8", errors))
    try:
        while view:
            view = view[os.write(fd, view) :]
    except BrokenPipeError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)  # nothing more to say, and nothing for the interpreter's last flush to fail on
        os.close(null)
    except OSError as exc:
        click.echo(
            f"error[output_unwritable]: standard output: {exc.strerror or exc} (the output is incomplete)",
            err=True,
        )
        sys.exit(2)


def _printable(value: Any) -> Any:
    """``value`` with each non-UTF-8 byte of a file name (a lone surrogate) written as ``\\xNN``."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def check_text_arguments(kwargs: dict[str, Any]) -> None:
    """``argument_not_utf8`` (exit 2) for a text option or argument holding bytes that are not UTF-8 (the
    shell passes them through as lone surrogates): names, ids and patterns are UTF-8 text. Paths are
    ``Path`` objects and may hold any bytes (they are shown with ``\\xNN``)."""
    for name, value in kwargs.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if isinstance(item, str) and not _is_utf8(item):
                shown = _parameter_name(name)
                raise InputError(
                    "argument_not_utf8",
                    f"{shown} is not UTF-8 text",
                    path=shown,
                    expected="UTF-8 text",
                    observed=_printable(item),
                )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _parameter_name(name: str) -> str:
    ctx = click.get_current_context(silent=True)
    for param in ctx.command.params if ctx is not None else []:
        if param.name == name:
            return param.opts[0] if isinstance(param, click.Option) else (param.human_readable_name)
    return name


def _fail_unexpected(schema: str, as_json: bool, exc: BaseException) -> NoReturn:
    """A package gpuopt imports that is not installed (exit 3, named), else a defect: never a bare
    traceback unless ``--debug`` asks for one."""
    if isinstance(exc, ModuleNotFoundError):
        package = missing_package(exc)
        if package is not None:
            _fail(schema, as_json, dependency_missing(package, exc))
    if _debug_enabled():
        traceback.print_exc()
    _fail(schema, as_json, InternalError("internal_error", f"{type(exc).__name__}: {exc}"))


def _fail(schema: str, as_json: bool, error: GpuoptError) -> NoReturn:
    if as_json:
        try:
            from gpuopt.models.envelope import ErrorItem

            emit_envelope(
                schema, ok=False, data=None, errors=[ErrorItem(**error.to_dict())], inputs=[], unmodeled=[]
            )
            sys.exit(error.exit_code)
        except ModuleNotFoundError:
            pass  # The envelope needs pydantic and what provenance imports: without them, stderr alone.
    click.echo(terminal_safe(f"error[{error.code}]: {error.message}"), err=True)
    for key in ("path", "expected", "observed"):
        value = getattr(error, key)
        if value is not None:
            click.echo(terminal_safe(f"  {key}: {value}"), err=True)
    sys.exit(error.exit_code)


def _touch_inputs(values: Any) -> None:
    """Notes the version of every file argument before the command reads it (see ``gpuopt._identity``):
    the identity it reports must be of the bytes it parsed."""
    from pathlib import PurePath

    from gpuopt import _identity

    for value in values:
        items = value if isinstance(value, tuple | list) else (value,)
        for item in items:
            if isinstance(item, str | PurePath) and str(item) not in ("", "-"):
                _identity.touch(item)


def with_output(doc: str | None, schema: str) -> str:
    """A command's help with the shape of its output stated last (every command's ``--help`` says it)."""
    import inspect

    return (
        f"{inspect.cleandoc(doc or '')}\n\nOutput: with --json, one {schema} envelope (gpuopt schema "
        f"{schema} describes every field)."
    )


def command(schema: str) -> Callable[[F], F]:
    """Adds ``--json`` to a click callback returning an :class:`Outcome` and applies the contract."""

    def decorate(fn: F) -> F:
        @click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON envelope on stdout.")
        @functools.wraps(fn)
        def wrapper(*args: Any, as_json: bool, **kwargs: Any) -> None:
            token = _AS_JSON.set(as_json)
            try:
                from gpuopt import _identity

                check_text_arguments(kwargs)
                from gpuopt.cli._params import check_outputs_are_not_inputs

                check_outputs_are_not_inputs(kwargs)
                with _identity.scope():
                    _touch_inputs([*args, *kwargs.values()])
                    with working(as_json):
                        outcome: Outcome = fn(*args, **kwargs)
            except GpuoptError as exc:
                _fail(schema, as_json, exc)
            except (click.exceptions.Exit, click.Abort, click.UsageError):
                raise
            except (KeyboardInterrupt, SystemExit, GeneratorExit):
                raise
            # A defect: never a bare traceback unless asked. BaseException, because a Rust panic in a
            # library (pyo3's PanicException, e.g. inside polars) derives from it, not from Exception.
            except BaseException as exc:
                _fail_unexpected(schema, as_json, exc)
            finally:
                _AS_JSON.reset(token)
            failure = outcome.failure
            if as_json and outcome.json_text is not None:
                emit(outcome.json_text, json_text=True)
            elif as_json:
                from gpuopt.models.envelope import ErrorItem

                emit_envelope(
                    outcome.schema or schema,
                    ok=failure is None,
                    data=outcome.data,
                    errors=[] if failure is None else [ErrorItem(**failure.to_dict())],
                    inputs=outcome.inputs,
                    unmodeled=outcome.unmodeled,
                )
            else:
                emit(outcome.render())
                if failure is not None:
                    click.echo(terminal_safe(f"error[{failure.code}]: {failure.message}"), err=True)
            code = outcome.exit_code if failure is None else failure.exit_code
            if code:
                sys.exit(code)

        wrapper.gpuopt_schema = schema  # type: ignore[attr-defined]  # which envelope: read by tests, MCP
        wrapper.__doc__ = with_output(fn.__doc__, schema)
        return wrapper  # type: ignore[return-value]

    return decorate
