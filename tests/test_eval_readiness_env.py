"""``gpuopt readiness check`` and the driver's environment: no shell and no GPU for the driver, inherited
values and secrets never recorded, driver and environment changes detected."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from conftest import gpuopt
from eval_support import workload
from gpuopt.errors import InputError
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import jsonio, readiness
from gpuopt.evaluation.store import ENV_KEY, Store
from gpuopt.models.evaluation.target import Target


def _check(req: dict[str, Any]) -> Any:
    return readiness.check(json.dumps(req).encode())


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    return workload.layout(tmp_path / "w")


def test_the_driver_runs_without_a_shell_in_its_own_group_with_no_gpu_visible(tmp_path: Path) -> None:
    layout = workload.layout(tmp_path / "w", behavior={"mode": "env_dump"})
    os.environ["GPUOPT_TEST_SECRET_TOKEN"] = "hunter2-very-secret"
    try:
        req = workload.request(layout, tmp_path / "root")
        req["driver"]["env_inherit"] = ["PATH", "GPUOPT_TEST_*"]
        req["driver"]["env"] = {"OMP_NUM_THREADS": "1"}
        _check(req)
    finally:
        del os.environ["GPUOPT_TEST_SECRET_TOKEN"]
    seen = json.loads((layout["behavior"] / "env.json").read_bytes())
    env = seen["env"]
    assert env["CUDA_VISIBLE_DEVICES"] == ""
    assert env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
    assert env["OMP_NUM_THREADS"] == "1"
    assert set(env) == {
        "PATH", "GPUOPT_TEST_SECRET_TOKEN", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
        "GPUOPT_REQUEST", "GPUOPT_OUTPUT_DIR", "GPUOPT_CALL_INDEX", "TMPDIR",
    }  # fmt: skip
    assert seen["pgid"] == seen["pid"] == seen["sid"]  # a new session: its own process group
    assert seen["argv"][0] == str(layout["driver"]) and seen["argv"][-2] == "--request"
    assert Path(seen["cwd"]).name == "0000"
    for path in (tmp_path / "root").rglob("*"):
        if path.is_file():
            assert b"hunter2-very-secret" not in path.read_bytes(), path
    inherited = {
        v.name: v
        for v in Target.model_validate_json((tmp_path / "root" / "target.json").read_bytes()).driver.inherited
    }
    assert inherited["GPUOPT_TEST_SECRET_TOKEN"].value is None


SECRETS = {
    # Names the old name-only redaction let through, and a short secret an unsalted sha256 would not protect.
    "GPUOPT_TEST_GITHUB_PAT": "ghp_hunter4",
    "GPUOPT_TEST_DATABASE_URL": "postgres://app:hunter5@db.internal/prod",
    "GPUOPT_TEST_SESSION_COOKIE": "sid=hunter6",
    "GPUOPT_TEST_PIN": "Zq4711",
}


def test_inherited_values_are_never_recorded_only_names_and_keyed_digests(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    import hashlib

    root = tmp_path / "root"
    os.environ.update(SECRETS)
    try:
        req = workload.request(layout, root)
        req["driver"]["env_inherit"] = ["PATH", "GPUOPT_TEST_*"]
        _check(req)
        run = gpuopt("show", str(root), json.loads((root / "target.json").read_text())["id"], "--json")
    finally:
        for name in SECRETS:
            del os.environ[name]
    assert run.code == 0
    for value in SECRETS.values():
        unsalted = hashlib.sha256(value.encode()).hexdigest()
        assert value not in run.stdout and unsalted not in run.stdout
        for path in [*root.rglob("*"), *(tmp_path / ".gpuopt-readiness").rglob("*")]:
            if path.is_file():
                data = path.read_bytes()
                assert value.encode() not in data and unsalted.encode() not in data, path
    target = Target.model_validate_json((root / "target.json").read_bytes())
    inherited = {v.name: v for v in target.driver.inherited}
    assert target.format == "gpuopt.target/v2" and target.driver.env_record == []
    assert set(SECRETS) | {"PATH"} == set(inherited)
    assert all(v.value is None for v in inherited.values()), "no value is recorded unless marked safe"
    assert (root / ENV_KEY).stat().st_mode & 0o777 == 0o600
    # Equality is still checked, through the root's key.
    drv.check_environment(target.driver, {**os.environ, **SECRETS}, Store(root))
    with pytest.raises(InputError) as err:
        drv.check_environment(
            target.driver, {**os.environ, **SECRETS, "GPUOPT_TEST_PIN": "Zq4712"}, Store(root)
        )
    assert (err.value.code, err.value.path) == ("environment_changed", "driver.inherited.GPUOPT_TEST_PIN")
    assert "Zq4711" not in err.value.to_dict().values() and "Zq4712" not in str(err.value.to_dict())


def test_env_record_marks_inherited_values_safe_to_record(layout: dict[str, Path], tmp_path: Path) -> None:
    req = workload.request(layout, tmp_path / "root")
    req["driver"]["env_inherit"] = ["PATH", "LANG"]
    req["driver"]["env_record"] = ["PATH"]
    _check(req)
    target = Target.model_validate_json((tmp_path / "root" / "target.json").read_bytes())
    values = {v.name: v.value for v in target.driver.inherited}
    assert values["PATH"] == os.environ["PATH"]
    assert values.get("LANG") is None


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_PAT", "ghp_x"),
        ("HF_TOKEN", "hf_x"),
        ("DATABASE_URL", "postgres://app:pw@db/prod"),
        ("MYSQL_PWD", "hunter2"),
        ("DB_PASS", "hunter2"),
        ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/XXXX"),
        ("STORAGE", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc123=="),
        ("API_URL", "https://api.example/v1?password=hunter2"),
        ("NOTIFY", "https://hooks.slack.com/services/T0/B0/XXXX"),
        ("PLAIN_NAME", "ghp_" + "a1B2" * 9),
    ],
)
def test_a_secret_looking_literal_is_refused_before_anything_is_written(
    layout: dict[str, Path], tmp_path: Path, name: str, value: str
) -> None:
    req = workload.request(layout, tmp_path / "root")
    req["driver"]["env"] = {"OMP_NUM_THREADS": "1", name: value}
    with pytest.raises(InputError) as err:
        _check(req)
    assert (err.value.code, err.value.path) == ("field_invalid", f"driver.env.{name}")
    assert value not in json.dumps(err.value.to_dict())
    assert not (tmp_path / "root").exists()
    # Issue 28: the refused request was kept, world-readable, in the attempt's work area.
    assert not (tmp_path / ".gpuopt-readiness").exists()


VALUE_SECRETS = {
    # Issue 28: env_record recorded these (a G* pattern, names without a marker, secrets inside values).
    "GITHUB_PAT": "ghp_" + "q7Zx" * 9,
    "GPUOPT_TEST_DB": "postgres://app:hunter7@db.internal/prod",
    "GPUOPT_TEST_API": "https://api.example/v1?sslmode=1&password=hunter8",
    "GPUOPT_TEST_STORE": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=hunter9==;",
    "GPUOPT_TEST_HOOK": "https://hooks.slack.com/services/T00/B00/hunter10",
    "MYSQL_PWD": "hunter11",
    "DB_PASS": "hunter12",
}


def test_env_record_never_records_a_secret_by_name_or_by_value(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    root = tmp_path / "root"
    plain = {"GPUOPT_TEST_PLAIN": "sm_90", "GPUOPT_TEST_PATHLIKE": "/opt/cuda/lib64"}
    os.environ.update({**VALUE_SECRETS, **plain})
    try:
        req = workload.request(layout, root)
        names = ["GITHUB_PAT", "MYSQL_PWD", "DB_PASS", "GPUOPT_TEST_*"]
        req["driver"]["env_inherit"] = ["PATH", "G*", *names]
        req["driver"]["env_record"] = ["G*", *names]
        _check(req)
    finally:
        for name in [*VALUE_SECRETS, *plain]:
            del os.environ[name]
    target = Target.model_validate_json((root / "target.json").read_bytes())
    values = {v.name: v.value for v in target.driver.inherited}
    assert {n: values[n] for n in VALUE_SECRETS} == dict.fromkeys(VALUE_SECRETS)
    assert {n: values[n] for n in plain} == plain
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for value in VALUE_SECRETS.values():
                assert value.encode() not in data, path


def test_a_v1_target_driver_is_still_read_and_checked_with_its_unsalted_digests(
    layout: dict[str, Path], tmp_path: Path
) -> None:
    """Roots made before gpuopt.target/v2 keep working: their inherited sha256 are compared as they are."""
    root = tmp_path / "root"
    _check(workload.request(layout, root))
    v2 = json.loads((root / "target.json").read_bytes())["driver"]
    env = dict(os.environ)
    v1 = {k: v for k, v in v2.items() if k not in ("env_record", "capabilities", "identity", "inherited")}
    v1["identity"] = jsonio.digest(v1)
    v1["inherited"] = [
        {
            "name": v["name"],
            "sha256": jsonio.sha256_hex(env[v["name"]].encode()),
            "value": None,
            "secret": False,
        }
        for v in v2["inherited"]
    ]
    driver = Target.model_fields["driver"].annotation.model_validate(v1)  # type: ignore[union-attr]
    keyless = tmp_path / "keyless"
    keyless.mkdir()
    drv.check_driver(driver)
    drv.check_environment(driver, env, Store(keyless))
    with pytest.raises(InputError) as err:
        drv.check_environment(driver, {**env, "LANG": "xx_XX.UTF-8"}, Store(keyless))
    assert (err.value.code, err.value.path) == ("environment_changed", "driver.inherited.LANG")


def test_driver_and_environment_changes_are_detected(layout: dict[str, Path], tmp_path: Path) -> None:
    root = tmp_path / "root"
    config = layout["base"] / "cfg"
    config.mkdir()
    (config / "model.yaml").write_text("layers: 2\n")
    req = workload.request(layout, root)
    req["driver"]["inputs"] = [str(config)]
    _check(req)
    target = Target.model_validate_json((root / "target.json").read_bytes())
    drv.check_driver(target.driver)
    drv.check_environment(target.driver, os.environ, Store(root))
    with pytest.raises(InputError) as err:
        drv.check_environment(target.driver, {**os.environ, "LANG": "xx_XX.UTF-8"}, Store(root))
    assert (err.value.code, err.value.path) == ("environment_changed", "driver.inherited.LANG")
    (config / "model.yaml").write_text("layers: 3\n")
    with pytest.raises(InputError) as err:
        drv.check_driver(target.driver)
    assert (err.value.code, err.value.path) == ("driver_changed", "driver.inputs[0]")
    (config / "model.yaml").write_text("layers: 2\n")
    drv.check_driver(target.driver)
    layout["driver"].write_text(layout["driver"].read_text() + "\n# edited\n")
    with pytest.raises(InputError) as err:
        drv.check_driver(target.driver)
    assert (err.value.code, err.value.path) == ("driver_changed", "driver.files[1]")
