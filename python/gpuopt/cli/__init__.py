"""The ``gpuopt`` command line: a click group, one module per area (``cli/<area>.py``), each imported
only when one of its commands runs (``_registry``), so help and ``--version`` start fast."""

from __future__ import annotations

import sys
import warnings

import click

from gpuopt.cli._registry import LazyGroup


def _version_message() -> str:
    # Plain json, not the NativeBuild model: --version stays as fast as --help.
    import json

    from gpuopt import __version__, _native

    native = json.loads(_native.build_info_json())
    return (
        f"gpuopt {__version__} (native {native['version']}, build {native['build_id']}, {native['profile']})"
    )


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(_version_message())
        ctx.exit(0)


@click.group(
    cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the gpuopt and native-module versions.",
)
@click.option("--debug", is_flag=True, help="Show Python tracebacks for internal errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """gpuopt: evidence for GPU workload optimization. Tools measure, parse and record; you decide.

    Every command takes --json and then prints exactly one JSON envelope
    {schema, ok, data, errors, unmodeled, provenance}. Exit codes: 0 ok, 2 bad input,
    3 a needed tool or GPU is absent, 1 internal error.

    Inputs are regular files (a FIFO or device is refused at once). provenance.inputs names each
    input's size and BLAKE3 digest (b3sum prints the same), of exactly the bytes read: a file that
    changes while a command reads it is an error. Digests are cached per (device, inode, size, mtime,
    ctime) in $GPUOPT_CACHE_DIR, else $XDG_CACHE_HOME/gpuopt or ~/.cache/gpuopt; an entry stands only
    with the cache's own keyed tag in a folder only you can write. GPUOPT_CACHE_DIR= (empty) turns the
    cache off and hashes every input.

    \b
    Examples:
      gpuopt doctor                 # this machine: OS, driver, GPUs, CUDA tools
      gpuopt doctor --json          # the same, as a gpuopt.doctor/v1 envelope
      gpuopt schema gpuopt.doctor/v1
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _warning_line(message: Warning | str, category: type[Warning], *_: object, **__: object) -> str:
    """A warning on the command line is one line on stderr, not a source excerpt."""
    return f"warning: {message}\n"


def main(argv: list[str] | None = None) -> None:
    """Console entry point: click usage errors exit 2, as an envelope when --json was asked for."""
    args = sys.argv[1:] if argv is None else argv
    warnings.formatwarning = _warning_line
    try:
        cli.main(args=args, prog_name="gpuopt", standalone_mode=False)
    except click.UsageError as exc:
        if "--json" in args:
            from gpuopt.cli._output import emit_envelope
            from gpuopt.models.envelope import ErrorItem

            emit_envelope(
                "gpuopt.error/v1",
                ok=False,
                data=None,
                errors=[ErrorItem(code="usage_invalid", message=exc.format_message())],
                inputs=[],
                unmodeled=[],
            )
        else:
            exc.show()
        sys.exit(2)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
