from __future__ import annotations

import json

from conftest import gpuopt
from gpuopt import __version__, _native
from gpuopt.schemas import ENVELOPES


def test_version_names_package_and_native_module() -> None:
    run = gpuopt("--version")
    assert run.code == 0
    assert run.stdout.startswith(
        f"gpuopt {__version__} (native {_native.__version__}, build {_native.BUILD_ID}"
    )


def test_usage_error_is_exit_2_and_an_envelope_with_json() -> None:
    run = gpuopt("doctor", "--no-such-option", "--json")
    assert run.code == 2
    envelope = run.json()
    assert envelope["schema"] == "gpuopt.error/v1"
    assert envelope["errors"][0]["code"] == "usage_invalid"


def test_unknown_command_is_exit_2() -> None:
    assert gpuopt("no-such-command").code == 2


def test_schema_lists_every_envelope() -> None:
    run = gpuopt("schema", "--json")
    assert run.code == 0
    assert run.json()["data"]["names"] == sorted(ENVELOPES)


def test_every_schema_prints_and_declares_the_envelope_fields() -> None:
    for name in ENVELOPES:
        run = gpuopt("schema", name)
        assert run.code == 0, name
        schema = json.loads(run.stdout)
        assert set(schema["required"]) >= {"schema", "ok", "data", "provenance"}
        assert schema["properties"]["schema"]["const"] == name


def test_unknown_schema_is_exit_2() -> None:
    run = gpuopt("schema", "gpuopt.nope/v9", "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == "schema_unknown"


def test_no_output_model_gives_advice() -> None:
    """Tools never choose the direction: no schema has a recommend/suggest/next_step/ranking field. (A
    distributed rank, `rank_source`, is a fact about the trace, not a ranking.)"""
    banned = ("recommend", "suggest", "next_step", "priority", "ranking", "ranked", "should")

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key in node.get("properties", {}):
                assert not key.startswith(banned), key
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for name in ENVELOPES:
        walk(json.loads(gpuopt("schema", name).stdout))
