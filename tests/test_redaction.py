"""Environment values are kept out of Targets by name and by value (issue 28): the rules of
``gpuopt.evaluation.redaction`` and their table in ``references/secrets.md``."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from gpuopt.evaluation import driver as drv
from gpuopt.evaluation import redaction

GHP = "ghp_" + "a1B2" * 9
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
AZURE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

# (name, value, why it must not be recorded): the findings of issue 28 first.
SECRET = [
    ("MYSQL_PWD", "hunter2", "secret_name"),
    ("DB_PASS", "hunter2", "secret_name"),
    ("SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/XXXX", "secret_name"),
    ("GITHUB_PAT", "ghp_x", "secret_name"),
    ("HF_TOKEN", "hf_x", "secret_name"),
    ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "secret_name"),
    ("sessionCookie", "sid=1", "secret_name"),
    (
        "STORAGE",
        f"DefaultEndpointsProtocol=https;AccountName=a;AccountKey={AZURE_KEY}",
        "connection_string_credential",
    ),
    ("SQL", "Server=tcp:db,1433;Database=d;User ID=u;Password=hunter2;", "connection_string_credential"),
    (
        "EVENTS",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=abc=",
        "connection_string_credential",
    ),
    ("DATABASE_URL", "postgres://app:hunter2@db/prod", "url_credentials"),
    ("DATABASE_URL", "postgres://db/prod?sslmode=require&password=hunter2", "url_credential_parameter"),
    ("API", "https://api.example/v1?token=abc", "url_credential_parameter"),
    ("BLOB", "https://a.blob.core.windows.net/c/f?sv=2022-11-02&sr=b&sig=abc%3D", "url_credential_parameter"),
    ("PIP_INDEX_URL", "https://user:tok@pypi.example/simple", "url_credentials"),
    ("ANY", GHP, "github_token"),
    ("ANY", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_token"),
    ("ANY", "glpat-abcdefghij0123456789", "gitlab_token"),
    ("ANY", "xoxb-123456789012-1234567890123-abcdef", "slack_token"),
    ("NOTIFY", "https://hooks.slack.com/services/T0/B0/XXXX", "slack_webhook"),
    ("ANY", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id"),
    ("ANY", "AIzaSyA-1234567890abcdefghijklmnopqrstu", "gcp_api_key"),
    ("ANY", "ya29.a0AfH6SMBx-abcdefghijklmnopqrstuvwxyz", "gcp_oauth_token"),
    ("ANY", '{"type": "service_account", "private_key": "x"}', "gcp_service_account"),
    ("ANY", AZURE_KEY, "azure_storage_key"),
    ("ANY", "hf_" + "abcdefghij" * 3 + "1234", "huggingface_token"),
    ("ANY", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "openai_key"),
    ("ANY", JWT, "jwt"),
    # Found by a hostile trial: a JWT whose signature is short matched no rule.
    ("ANY", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", "bearer_token"),
    ("EXTRA_HEADER", "bearer 0123456789abcdefXYZ", "bearer_token"),
    ("ANY", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk=", "private_key_block"),
    ("OAUTHX", "k8Jd93jfK2mZp1Qx9rLs", "high_entropy_value"),
    ("NCCL_IB_PKEYX", "k8Jd93jfK2mZp1Qx9rLs", "high_entropy_value"),
]

# Recorded: the allowlist, plain values, and weak markers with plain values.
PLAIN = [
    ("PWD", "/home/me/project"),
    ("OLDPWD", "/home/me"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("NCCL_IB_PKEY", "0"),
    ("CUDA_VISIBLE_DEVICES", "0,1"),
    ("LC_ALL", "C.UTF-8"),
    ("PATH", "/usr/local/cuda/bin:/usr/bin"),
    ("TRITON_CACHE_DIR", "/root/.triton/cache/VSJU4SVKNWVE5J7O7AORNNFSDXWNMZL4EN4TFZU25Q33IAWDKZKA"),
    ("TORCH_CUDA_ARCH_LIST", "8.0;9.0"),
    ("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"),
    ("HF_HOME", "/data/hf"),
    ("MASTER_ADDR", "10.0.0.1"),
    ("AUTHOR", "someone"),
    ("NCCL_IB_PKEYX", "3"),
    ("REPO_URL", "ssh://git@github.com/org/repo.git"),
]


@pytest.mark.parametrize(("name", "value", "reason"), SECRET)
def test_secrets_are_found_by_name_or_by_value(name: str, value: str, reason: str) -> None:
    assert redaction.secret_reason(name, value) == reason
    assert drv.recorded_value(name, value, [name]) is None
    assert drv.recorded_value(name, value, ["*"]) is None


@pytest.mark.parametrize(("name", "value"), PLAIN)
def test_plain_values_are_recorded_where_env_record_names_them(name: str, value: str) -> None:
    assert redaction.secret_reason(name, value) is None
    assert drv.recorded_value(name, value, [name]) == value
    assert drv.recorded_value(name, value, []) is None


def test_a_prefix_pattern_never_records_a_secret_name() -> None:
    # Issue 28: env_record ["G*"] recorded GITHUB_PAT.
    environ = {"GITHUB_PAT": "ghp_short", "GPU_ARCH": "sm_90", "GITHUB_SHA": "0" * 40}
    snapshot = drv.snapshot_environment(["G*"], environ, key=b"k" * 32, record=["G*"])
    assert {v.name: v.value for v in snapshot} == {
        "GITHUB_PAT": None,
        "GITHUB_SHA": "0" * 40,
        "GPU_ARCH": "sm_90",
    }


def _documented_allowlist() -> list[str]:
    text = (ROOT / "references" / "secrets.md").read_text(encoding="utf-8")
    section = text.split("<!-- verbatim:begin -->")[1].split("<!-- verbatim:end -->")[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def test_the_allowlist_is_the_documented_one() -> None:
    assert _documented_allowlist() == list(redaction.VERBATIM)


def test_every_value_rule_is_documented() -> None:
    text = (ROOT / "references" / "secrets.md").read_text(encoding="utf-8")
    for rule, _ in redaction._VALUE_RULES:
        assert f"`{rule}`" in text, rule
