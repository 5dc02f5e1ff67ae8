"""The root's environment key (``keys/env.key``) that a ``gpuopt.target/v2`` Target's inherited-variable
digests are keyed with: present, well formed, and verifying every digest whose value the Target records."""

from __future__ import annotations

from pydantic import BaseModel

from gpuopt.errors import InputError
from gpuopt.evaluation.store import ENV_KEY, Store, env_digest, key_problem
from gpuopt.models.evaluation.driver import InheritedVariable
from gpuopt.models.evaluation.store import Defect
from gpuopt.models.evaluation.target import Target

EXPECTED = "the root's private key: 64 hex digits and a newline, made by readiness"


def check_env_key(store: Store, target: BaseModel | None) -> list[Defect]:
    """Nothing to check for a diagnostic Target (no driver) or a v1 one (unkeyed digests)."""
    if not isinstance(target, Target) or target.driver.env_record is None:
        return []
    if not store.exists(ENV_KEY):
        return [Defect(code="env_key_missing", path=ENV_KEY, expected=EXPECTED, record="target.json")]
    try:
        data = store.read_bytes(ENV_KEY, max_bytes=256)
    except InputError as exc:
        return [Defect(code="env_key_invalid", path=ENV_KEY, expected=EXPECTED, observed=exc.message)]
    problem = key_problem(data)
    if problem is not None:
        return [
            Defect(
                code="env_key_invalid",
                path=ENV_KEY,
                expected=EXPECTED,
                observed=problem,
                record="target.json",
            )
        ]
    key = bytes.fromhex(data.decode("ascii").strip())
    wrong = [
        v.name
        for v in target.driver.inherited
        if isinstance(v, InheritedVariable)
        and v.value is not None
        and env_digest(key, v.name, v.value) != v.hmac_sha256
    ]
    if not wrong:
        return []
    return [
        Defect(
            code="env_key_mismatch",
            path=ENV_KEY,
            expected="the key target.json's recorded variables were digested with",
            observed=f"a key under which the digests of {', '.join(wrong)} do not verify",
            record="target.json",
        )
    ]
