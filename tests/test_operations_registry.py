"""The operations registry is the one place a verb is listed (issue 29 item 3): every reference loads as what
it claims to be, the CLI's request-taking commands, the request schemas, the MCP tools and the ``operation``
enum of the records are the registry's, each verb's MCP tool takes the CLI's option names, no other module
holds a list of verb names, and a throwaway verb registered in a temporary registry (one entry, its request
model and its handler) is picked up by the CLI, MCP, ``gpuopt schema``, dry run, invocation, status and
cancel (the recipe in ``references/architecture.md``, "Where to add a new evaluation verb")."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Literal

import click
import pytest
from pydantic import BaseModel

from cli_inproc import run_main
from eval_support import workload
from gpuopt import agent_tools, schemas
from gpuopt.cli import _registry, cli
from gpuopt.cli._output import with_output
from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, operations, plans, readiness, registry
from gpuopt.evaluation import target as targets
from gpuopt.evaluation.execution import Execution, ExecutionSpec
from gpuopt.evaluation.operations import Built
from gpuopt.evaluation.records import read_request
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.capture import CaptureDiffCitation
from gpuopt.models.evaluation.evaluation_data import EvaluationData
from gpuopt.models.evaluation.invocation import (
    FrozenRequest,
    FrozenVariant,
    InvocationResult,
    Plan,
    RequestCore,
)
from gpuopt.models.evaluation.operations import BaselinePlanSpec, EvaluationRequestBase
from gpuopt.models.evaluation.status import InvocationStatus
from test_import_layers import layers, rank_of

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "gpuopt"
VERBS = registry.VERBS


def _module(ref: str) -> str:
    return ref.partition(":")[0]


# ---- the table itself --------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_every_reference_loads_as_what_it_names(verb: registry.Verb) -> None:
    assert issubclass(verb.data_model(), BaseModel)
    assert callable(verb.entry())
    if verb.request is not None:
        model = verb.request_model()
        members = getattr(model, "__args__", (model,))
        assert all(issubclass(m, BaseModel) for m in members)
    models = [verb.data, *([verb.request] if verb.request else [])]
    code = [verb.run]
    if verb.supervised is not None:
        s = verb.supervised
        core, frozen, result = registry.load(s.core), registry.load(s.frozen), registry.load(s.result)
        assert issubclass(core, RequestCore)
        assert core.model_fields["operation"].annotation == Literal[verb.name]
        assert issubclass(frozen, core) and issubclass(frozen, FrozenRequest)
        assert issubclass(result, InvocationResult)
        handler = registry.load(s.handler)()
        assert handler.result_model is result
        assert callable(handler.verdict) and callable(handler.extra_fields)
        models += [s.core, s.frozen, s.result]
        code += [s.handler, *([s.build] if s.build else [])]
        if s.build is not None:
            assert callable(registry.load(s.build))
    table = layers()
    # models may be loaded by the store layer, code only by the operations layer and above
    assert [m for m in models if not _module(m).startswith("gpuopt.models.")] == []
    assert [c for c in code if (rank_of(_module(c), table) or 99) > 7] == []


def test_names_commands_schemas_and_twins_are_unique() -> None:
    for key in ("name", "command", "envelope", "request_schema", "api"):
        values = [getattr(v, key) for v in VERBS if getattr(v, key) is not None]
        assert len(values) == len(set(values)), key
    assert all(v.generated == (v.help is not None) for v in VERBS)
    # a generated command is a top-level submission of a supervised verb built from its request
    for verb in VERBS:
        if verb.generated:
            assert verb.supervised is not None and verb.supervised.build is not None, verb.name
            assert verb.request is not None and len(verb.command) == 1, verb.name


def test_an_unknown_verb_is_a_typed_error() -> None:
    with pytest.raises(InputError) as err:
        registry.get("no_such_verb")
    assert err.value.code == "operation_unknown" and "final_audit" in (err.value.expected or "")
    with pytest.raises(InputError) as err:
        operations.run("experiment", b"{}")
    assert err.value.code == "operation_unknown"


# ---- every reader agrees with it ---------------------------------------------------------------------------


def _commands() -> dict[tuple[str, ...], click.Command]:
    return {path: cmd for path, cmd in agent_tools.walk(cli) if not isinstance(cmd, click.Group)}


def test_the_cli_request_verbs_are_the_registry() -> None:
    commands = _commands()
    takes_request = {p for p, cmd in commands.items() if any(x.name == "request_file" for x in cmd.params)}
    assert takes_request == {v.command for v in VERBS if v.request is not None}
    assert {v.command for v in VERBS} <= set(commands)
    for verb in VERBS:
        if verb.generated:
            assert commands[verb.command].help == with_output(verb.help, verb.envelope)
            assert _registry.commands()[verb.command[0]].module == _registry.GENERATED


def test_the_schemas_are_the_registry() -> None:
    documents = set(schemas.DOCUMENTS)
    requests = {n for n in documents if n.startswith("gpuopt.request.")}
    assert requests == {v.request_schema for v in VERBS if v.request_schema is not None}
    frozen = {n for n in documents if n.startswith("gpuopt.invocation-request.")}
    assert frozen == {f"gpuopt.invocation-request.{v.document}/v1" for v in VERBS if v.supervised}
    results = {n for n in documents if n.startswith("gpuopt.invocation-result.")}
    assert results == {
        f"gpuopt.invocation-result.{v.document}/v{n}" for v in VERBS if v.supervised for n in (1, 2, 3)
    }
    for verb in VERBS:
        assert schemas.DATA_MODELS[verb.envelope] is verb.data_model()


def test_the_mcp_tools_serve_every_verb() -> None:
    names = {tool.name for tool in agent_tools.tools(cli)}
    assert {"_".join(v.command).replace("-", "_") for v in VERBS} <= names


def _cli_words(command: click.Command) -> set[str]:
    """What a person types: each option's long name, each argument's name (``--timeout-s``, ``ROOT``)."""
    words = set()
    for p in command.params:
        if p.name in ("as_json", "help") or not p.expose_value:
            continue
        long = [o for o in p.opts if o.startswith("--")] if isinstance(p, click.Option) else []
        words.add(long[0] if long else str(p.name))
    return words


def _mcp_words(tool: agent_tools.Tool) -> set[str]:
    """The same words read back from the tool's published input schema (``timeout_s`` is ``--timeout-s``)."""
    arguments = {str(p.name) for p in tool.command.params if isinstance(p, click.Argument)}
    names = agent_tools.input_schema(tool.command)["properties"]
    return {n if n in arguments else "--" + n.replace("_", "-") for n in names}


@pytest.mark.parametrize("verb", VERBS, ids=lambda v: v.name)
def test_the_mcp_tool_of_a_verb_takes_the_cli_option_names(verb: registry.Verb) -> None:
    """An agent passes ``request``, ``wait``, ``timeout_s``, ``dry_run`` where a person types ``--request``,
    ``--wait``, ``--timeout-s``, ``--dry-run``: one set of names, whatever the Python function calls them."""
    (tool,) = [t for t in agent_tools.tools(cli) if t.path == verb.command]
    assert _mcp_words(tool) == _cli_words(tool.command)
    if verb.generated:
        assert agent_tools.input_schema(tool.command)["required"] == ["request"]


def test_no_tool_takes_two_parameters_of_one_name() -> None:
    for tool in agent_tools.tools(cli):
        names = [agent_tools.param_name(p) for p in tool.command.params if p.name not in ("as_json", "help")]
        assert len(names) == len(set(names)), tool.name


def test_the_operation_enums_of_the_records_are_the_registry() -> None:
    status = InvocationStatus.model_json_schema()["properties"]["operation"]
    status.pop("description")  # every field is described (tests/test_schema_descriptions.py)
    assert status == {"enum": registry.operation_names(), "title": "Operation", "type": "string"}
    assert registry.operation_names()[0] == "readiness_smoke"  # the enum keeps the order of the records
    cited = CaptureDiffCitation.model_json_schema()["properties"]["operation"]["enum"]
    assert cited == ["target", "final_audit"] == registry.citing_names()


# ---- nothing else lists the verbs --------------------------------------------------------------------------


def _verb_words() -> set[str]:
    words = set()
    for verb in VERBS:
        words |= {verb.name, verb.document, "-".join(verb.command), "_".join(verb.command), *verb.command}
    return words - {"champion", "readiness"}  # command groups, not verbs


def lists_of_verbs(source: str, words: set[str]) -> list[int]:
    """Lines of collection literals (list, tuple, set, dict keys, ``Literal[...]``) that name two verbs of
    which one is unmistakable (``final_audit``, ``restore-original``: a word with a separator), or only
    verbs, three or more. Field names and headings that happen to be verb words (``"noise"`` among a
    result's keys, a ``"screen"`` column) are not a list of verbs."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            items: list[ast.expr | None] = list(node.keys)
        elif isinstance(node, ast.List | ast.Tuple | ast.Set):
            items = list(node.elts)
        else:
            continue
        strings = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        named = {s for s in strings if s in words}
        distinct = any("_" in s or "-" in s for s in named)
        if (len(named) >= 2 and distinct) or (len(named) >= 3 and set(strings) == named):
            found.append(node.lineno)
    return found


def test_the_checker_finds_a_list_of_verbs_and_not_field_names() -> None:
    words = _verb_words()
    assert lists_of_verbs('X = {"target": 1, "final_audit": 2}', words) == [1]
    assert lists_of_verbs('X: Literal["target", "final_audit"]', words) == [1]
    assert lists_of_verbs('if op in ("baseline", "noise", "screen"):\n    pass', words) == [1]
    for fields in (
        'KEYS = ("statistics", "pairs", "noise", "capture", "cases", "resolution")',
        'REFS = ("baseline", "noise", "result")',
        'HEAD = ["mechanism", "experiment", "rejection scope", "screen", "target"]',
    ):
        assert lists_of_verbs(fields, words) == []


def test_no_module_but_the_registry_lists_the_verbs() -> None:
    words = _verb_words()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "evaluation" / "registry.py":
            continue
        found += [f"{path.relative_to(PACKAGE)}:{line}" for line in lists_of_verbs(path.read_text(), words)]
    assert found == [], "list these verbs through gpuopt.evaluation.registry"


# ---- a throwaway verb --------------------------------------------------------------------------------------


class ThrowawayRequest(EvaluationRequestBase):
    """The original on the given cases, once each."""

    plan: BaselinePlanSpec


class ThrowawayCore(RequestCore):
    operation: Literal["throwaway"]


class ThrowawayFrozen(ThrowawayCore, FrozenRequest):
    """A frozen ``throwaway`` request."""


class ThrowawayResult(InvocationResult):
    """A ``throwaway`` result: the invocation's own facts and the verb's one field."""

    calls_seen: int


class ThrowawayData(EvaluationData):
    result: ThrowawayResult | None


class ThrowawayHandler:
    """Its verdict and its own field, from the execution the supervisor hands it."""

    result_model = ThrowawayResult

    def verdict(self, spec: ExecutionSpec, execution: Execution) -> str:
        return "passed" if execution.validity == "valid" and not execution.correctness_failed else "failed"

    def extra_fields(self, spec: ExecutionSpec, execution: Execution) -> dict[str, Any]:
        return {"calls_seen": len(execution.receipts)}


def build(req: ThrowawayRequest, cwd: Path) -> Built:
    store = Store.open(cwd / req.root)
    target = targets.optimizable(targets.load(store, req.target)[0])
    cases = plans.case_ids(target, req.plan.case_ids)
    core = ThrowawayCore(
        operation="throwaway",
        plan=Plan(
            case_ids=cases,
            pairs=None,
            calls_per_case=1,
            samples_per_call=req.plan.samples_per_call,
            warmup_per_call=req.plan.warmup_per_call,
            seed=target.statistics.seed,
            lifecycle="isolated",
        ),
        evidence_plan=plans.single_steps(cases, 1, "original"),
        variants={"original": FrozenVariant(kind=target.original.kind, digest=target.original.digest)},
    )
    return Built(store, target, core)


def run(data: Any, **kw: Any) -> ThrowawayData:
    out: ThrowawayData = operations.run("throwaway", data, **kw)
    return out


HERE = __name__
THROWAWAY = registry.Verb(
    name="throwaway",
    command=("throwaway",),
    request=f"{HERE}:ThrowawayRequest",
    envelope="gpuopt.throwaway/v1",
    data=f"{HERE}:ThrowawayData",
    run=f"{HERE}:run",
    supervised=registry.Supervised(
        core=f"{HERE}:ThrowawayCore",
        frozen=f"{HERE}:ThrowawayFrozen",
        result=f"{HERE}:ThrowawayResult",
        handler=f"{HERE}:ThrowawayHandler",
        build=f"{HERE}:build",
    ),
    help="""Run the original once per case (a verb that exists only in this test).

    \b
    Examples:
      gpuopt throwaway --request throwaway.json --dry-run
    """,
)


def test_a_throwaway_verb_is_picked_up_by_every_reader(tmp_path: Path) -> None:
    """One entry, its request model and its handler: the CLI command and its help, MCP's tool (with the
    CLI's option names), the schemas, the dry run, the submission, its handler,
    status and cancel. The recipe in ``references/architecture.md`` points here."""
    layout = workload.layout(tmp_path / "w")
    root = tmp_path / "root"
    readiness.check(json.dumps(workload.request(layout, root)).encode())
    request = {"root": str(root), "plan": {"case_ids": ["a"], "samples_per_call": 2, "warmup_per_call": 0}}
    file = tmp_path / "throwaway.json"
    file.write_text(json.dumps(request))
    assert "throwaway" not in run_main("--help").stdout
    with registry.using((*registry.VERBS, THROWAWAY)):
        # the CLI listing and the command's help
        listing = run_main("--help").stdout
        assert "throwaway" in listing and "Run the original once per case" in listing
        assert run_main("throwaway", "--help").code == 0
        # MCP's tool: the CLI's option names, and its call is the CLI's argv
        (tool,) = [t for t in agent_tools.tools(cli) if t.name == "throwaway"]
        assert set(agent_tools.input_schema(tool.command)["properties"]) == {
            "request",
            "wait",
            "timeout_s",
            "dry_run",
        }
        words = agent_tools.argv(tool, {"request": str(file), "dry_run": True})
        assert words == ["throwaway", "--request", str(file), "--dry-run", "--json"]
        # the schemas: its request, its frozen request, its result, its envelope
        shown = run_main("schema", "gpuopt.request.throwaway/v1", "--json")
        assert shown.code == 0 and "plan" in json.dumps(shown.json()["data"])
        result_schema = run_main("schema", "gpuopt.invocation-result.throwaway/v1", "--json")
        assert result_schema.code == 0 and "calls_seen" in json.dumps(result_schema.json()["data"])
        assert "gpuopt.invocation-request.throwaway/v1" in schemas.DOCUMENTS
        envelope = run_main("schema", "gpuopt.throwaway/v1", "--json")
        assert envelope.code == 0 and "calls_seen" in json.dumps(envelope.json()["data"])
        # the dry run, through MCP's argv of the generated command: a plan, nothing written
        dry = run_main(*words)
        assert dry.code == 0, dry.stderr
        env = dry.json()
        assert env["schema"] == "gpuopt.throwaway/v1"
        assert env["data"]["dry_run"]["request"]["operation"] == "throwaway"
        assert env["data"]["dry_run"]["calls"]["total"] == 1
        assert not (root / "invocations").exists() or not any((root / "invocations").iterdir())
        # the invocation: submitted, its frozen request read back, its handler, its status
        out = run(request, cwd=tmp_path, start=False)
        inv = out.submission.invocation_id
        assert type(read_request(Store(root), inv)) is ThrowawayFrozen
        assert [line.keys["operation"] for line in Store(root).ledger() if line.id == inv] == ["throwaway"]
        handler = invocation.handler_for("throwaway")
        assert type(handler) is ThrowawayHandler and handler.result_model is ThrowawayResult
        shown = run_main("status", str(root), inv, "--json")
        assert shown.code == 0, shown.stderr
        assert shown.json()["data"]["invocation"]["operation"] == "throwaway"
        # cancel: a second submission, never started, is cancelled by its id
        again = run({**request, "retry_of": inv}, cwd=tmp_path, start=False).submission.invocation_id
        cancelled = run_main("cancel", str(root), again, "--json")
        assert cancelled.code == 0, cancelled.stderr
        assert cancelled.json()["data"]["operation"] == "throwaway"
    assert "throwaway" not in run_main("--help").stdout
    with pytest.raises(InputError):
        registry.get("throwaway")
