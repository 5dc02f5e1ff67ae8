"""The typed request path (issue 14 item 2): builders return typed frozen cores, each frozen request is its
core plus what gpuopt adds, a core hashes exactly as the dict it replaced, and a dict given to the Python
API is validated strictly into the core of its operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import ValidationError

from gpuopt.errors import InputError
from gpuopt.evaluation import invocation, jsonio, registry
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef, ResultRef
from gpuopt.models.evaluation.experiment import Contract
from gpuopt.models.evaluation.frozen import BoundCore, ContractCore, TargetCore, TargetFrozen
from gpuopt.models.evaluation.invocation import FrozenRequest, Limits, RequestCore, ToolIdentity
from gpuopt.models.evaluation.operations import Binding

SHA = "ab" * 32
STEP = {"call_index": 0, "pair_index": 0, "case_id": "a", "order": "AB", "roles": ["reference", "candidate"]}
TARGET_CORE: dict[str, Any] = {
    "operation": "target",
    "plan": {
        "case_ids": ["a"],
        "pairs": 1,
        "calls_per_case": None,
        "samples_per_call": 3,
        "warmup_per_call": 1,
        "seed": 7,
        "lifecycle": "isolated",
    },
    "evidence_plan": [{**STEP, "lifecycle": "isolated"}],
    "variants": {
        "reference": {"kind": "source", "digest": "cd" * 32},
        "candidate": {"kind": "artifact", "digest": "ef" * 32},
    },
    "experiment": {"id": "exp-1", "sha256": SHA},
    "mechanism": "fewer launches",
    "reference_binding": {"selection": None, "pointer_sha256": None},
    "contract": {
        "lifecycle": "isolated",
        "shared_state": [],
        "rebuilt_state": [],
        "gates": [],
        "diagnostics": [],
    },
    "noise": {"invocation_id": "inv-" + "0" * 32, "sha256": SHA},
    "screens": [{"invocation_id": "inv-" + "1" * 32, "sha256": SHA}],
}
TOOL = ToolIdentity(
    gpuopt_version="0.1.0",
    native_build_id="b",
    evaluation_format="gpuopt.evaluation/v1",
    implementation_sha256=SHA,
)


def test_every_frozen_request_is_its_core_plus_what_gpuopt_adds() -> None:
    added = set(FrozenRequest.model_fields) - set(RequestCore.model_fields)
    assert added == {
        "format",
        "target",
        "tool_identity",
        "host_id",
        "gpus",
        "limits",
        "retry_of",
        "keep_workspace",
        "created_at_epoch",
        "request_digest",
    }
    for verb in registry.verbs():
        if verb.supervised is None:
            continue
        operation = verb.name
        core = registry.load(verb.supervised.core)
        frozen = registry.load(verb.supervised.frozen)
        assert issubclass(frozen, core) and issubclass(frozen, FrozenRequest), operation
        assert set(frozen.model_fields) == set(core.model_fields) | added, operation
        # the operation is pinned in the core and survives the second base (FrozenRequest's registry enum)
        assert frozen.model_fields["operation"].annotation == Literal[operation], operation


def test_a_core_is_frozen_and_narrows_by_isinstance() -> None:
    core = invocation.request_core(TARGET_CORE)
    assert type(core) is TargetCore
    assert isinstance(core, BoundCore) and isinstance(core, ContractCore)
    assert core.reference_binding == Binding(selection=None, pointer_sha256=None)
    assert core.screens == [ResultRef(invocation_id="inv-" + "1" * 32, sha256=SHA)]
    with pytest.raises(ValidationError):
        core.mechanism = "other"  # type: ignore[misc]
    assert invocation.request_core(core) is core


def test_a_typed_core_digests_as_the_dict_it_replaced(tmp_path: Path) -> None:
    """The digest (and so the invocation id) of a typed core is that of the JSON dict the builders made
    before cores were typed: request.json files written by older builds keep deduplicating."""
    ref = RecordRef(id="tgt-" + "9" * 64, sha256=SHA)
    envelope = {
        "format": "gpuopt.invocation-request/v1",
        "target": {"id": ref.id, "sha256": SHA},
        "tool_identity": TOOL.model_dump(),
        "host_id": "host-1",
        "gpus": ["GPU-0"],
    }
    store = Store(tmp_path)
    typed = TargetCore.model_validate(TARGET_CORE)
    prepared = invocation.Prepared(store, typed, ref, TOOL, "host-1", ("GPU-0",))
    from_dict = invocation.Prepared(
        store, invocation.request_core(TARGET_CORE), ref, TOOL, "host-1", ("GPU-0",)
    )
    expected = jsonio.digest({**TARGET_CORE, **envelope})
    assert prepared.digest == from_dict.digest == expected
    assert prepared.first == "inv-" + jsonio.digest({"request_digest": expected})[:32]
    frozen = invocation.frozen_document(
        prepared, limits=Limits(), retry_of=None, keep_workspace=False, now=5.0
    )
    assert type(frozen) is TargetFrozen
    assert frozen.request_digest == expected == invocation.request_digest(frozen.model_dump(mode="json"))
    again = jsonio.load(TargetFrozen, jsonio.record_bytes(frozen), what="request")
    assert again == frozen and jsonio.record_bytes(again) == jsonio.record_bytes(frozen)


@pytest.mark.parametrize(
    ("change", "code", "path"),
    [
        ({"extra": 1}, "field_unknown", "extra"),
        ({"operation": "warp"}, "field_invalid", "operation"),
        ({"screens": None}, "field_invalid", "screens"),
        (
            {"contract": {**TARGET_CORE["contract"], "lifecycle": "forever"}},
            "field_invalid",
            "contract.lifecycle",
        ),
    ],
)
def test_a_dict_core_is_validated_strictly(change: dict[str, Any], code: str, path: str) -> None:
    with pytest.raises(InputError) as err:
        invocation.request_core({**TARGET_CORE, **change})
    assert (err.value.code, err.value.path) == (code, path)


def test_a_missing_operation_field_names_it() -> None:
    bare = {k: v for k, v in TARGET_CORE.items() if k not in ("screens",)}
    with pytest.raises(InputError) as err:
        invocation.request_core(bare)
    assert (err.value.code, err.value.path) == ("field_missing", "screens")
    assert Contract.model_validate(TARGET_CORE["contract"]).lifecycle == "isolated"
