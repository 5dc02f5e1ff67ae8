"""``gpuopt driver init``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._registry import Group
from gpuopt.errors import InputError

if TYPE_CHECKING:
    pass


@click.group(cls=Group)
def driver() -> None:
    """The workload driver protocol (gpuopt.driver/v1)."""


@driver.command("init")
@click.argument(
    "directory",
    type=click.Path(path_type=Path, file_okay=False),
    help="The folder to write driver.py and schemas/ into (created; existing files are never overwritten).",
)
@command("gpuopt.driver-init/v1")
def init(directory: Path) -> Outcome:
    """Write a documented template driver and the JSON Schemas of its request and result.

    Writes DIRECTORY/driver.py (standard library only; edit the four marked functions) and
    DIRECTORY/schemas/driver-{request,result}.schema.json. Existing files are never overwritten.

    \b
    Examples:
      gpuopt driver init bench/
      python bench/driver.py --request calls/0000/request.json   # what gpuopt runs
    """
    from importlib import resources

    from gpuopt.models.evaluation.cli import DriverInit
    from gpuopt.models.evaluation.driver import DriverRequest, DriverResult

    files = {
        "driver.py": resources.files("gpuopt.evaluation")
        .joinpath("driver_template.py")
        .read_text(encoding="utf-8"),
        "schemas/driver-request.schema.json": json.dumps(DriverRequest.model_json_schema(), indent=2) + "\n",
        "schemas/driver-result.schema.json": json.dumps(DriverResult.model_json_schema(), indent=2) + "\n",
    }
    existing = [name for name in files if (directory / name).exists()]
    if existing:
        raise InputError(
            "destination_exists",
            f"{directory / existing[0]} already exists; nothing was written",
            path=str(directory / existing[0]),
        )
    (directory / "schemas").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        with open(directory / name, "x", encoding="utf-8") as f:
            f.write(text)
    (directory / "driver.py").chmod(0o755)
    out = DriverInit(directory=str(directory.resolve()), files=sorted(files))
    return Outcome(data=out, render=lambda: "\n".join(str(directory / n) for n in out.files))
