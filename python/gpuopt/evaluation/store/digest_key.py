"""The root's private key for inherited-variable digests: ``keys/env.key``, 32 random bytes written as 64 hex
digits and a newline, mode 0600, made by readiness and never in a record. A Target (``gpuopt.target/v2``)
records each inherited variable as HMAC-SHA256(key, name ``\\0`` value)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from gpuopt.errors import InputError
from gpuopt.evaluation.store.root import Store

ENV_KEY = "keys/env.key"
KEY_FILE = re.compile(rb"[0-9a-f]{64}\n")
"""The whole file: 32 bytes as lowercase hex, and a newline."""


def create_env_key(store: Store) -> bytes:
    """Creates a fresh root's private digest key (readiness, before the driver is normalized)."""
    key = secrets.token_bytes(32)
    store.ensure_dir("keys")
    store.replace_bytes(ENV_KEY, key.hex().encode() + b"\n", mode=0o600)
    return key


def key_problem(data: bytes) -> str | None:
    """Why ``data`` is not a key file, if it is not."""
    if KEY_FILE.fullmatch(data):
        return None
    return "an empty file" if not data else f"{len(data)} bytes that are not 64 hex digits and a newline"


def env_key(store: Store) -> bytes:
    """The root's digest key (``environment_key_missing`` when a v2 Target's root lost it or it is damaged:
    an emptied key would key every digest differently, so every inherited variable would look changed)."""
    try:
        data = store.read_bytes(ENV_KEY, max_bytes=256)
    except InputError:
        data = None
    problem = "missing or unreadable" if data is None else key_problem(data)
    if data is None or problem is not None:
        raise InputError(
            "environment_key_missing",
            f"{store.root / ENV_KEY} is {problem}: the inherited environment cannot be checked",
            path=ENV_KEY,
        )
    return bytes.fromhex(data.decode("ascii").strip())


def env_digest(key: bytes, name: str, value: str) -> str:
    data = name.encode() + b"\0" + value.encode("utf-8", "surrogateescape")
    return hmac.new(key, data, hashlib.sha256).hexdigest()
