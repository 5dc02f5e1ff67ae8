"""Which environment values may be recorded: secrets are found by name *and* by value.

A Target records an inherited variable's value only when the declaration's ``env_record`` names it and
:func:`secret_reason` finds nothing; every other inherited variable keeps its name and a keyed digest.
A literal (``driver.env``, recorded as written) for which :func:`secret_reason` finds something is refused.
``references/secrets.md`` is the table of these rules and of :data:`VERBATIM`, the allowlist.

The rules, in order:

1. A name on the allowlist (:data:`VERBATIM`) is recorded verbatim: paths, locales, device lists and
   framework switches whose names merely look like secrets (``PWD``, ``TOKENIZERS_PARALLELISM``).
2. A name with a secret word (``GITHUB_PAT``, ``MYSQL_PWD``, ``DB_PASS``, ``SLACK_WEBHOOK_URL``,
   ``HF_TOKEN``, ``AWS_SECRET_ACCESS_KEY``) is never recorded, whatever its value.
3. A value that carries a credential is never recorded, whatever its name: URL userinfo with a password
   (``scheme://user:pass@host``), a credential query parameter (``?password=``, ``token=``, ``key=``,
   ``sig=``), a credential field of a connection string (``AccountKey=``, ``Password=``,
   ``SharedAccessKey=``), a well-known token shape (GitHub, GitLab, Slack and its webhook URLs, AWS, GCP,
   Azure storage, Hugging Face, OpenAI, Anthropic, npm, PyPI, Stripe, JWTs, private-key blocks).
4. A name that only *contains* a weaker marker (``KEY`` in ``NCCL_IB_PKEY``, ``SESSION``, ``AUTH``) keeps
   its value unless the value looks random (high entropy): ``1`` or ``/opt/x`` is kept, a 32-character
   random string is not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from fnmatch import fnmatchcase

VERBATIM: tuple[str, ...] = (
    # paths and the shell's own bookkeeping
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "SHELL",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "LD_LIBRARY_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDNN_HOME",
    "NVHPC_ROOT",
    # locale and terminal
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_CLASS",
    "XDG_SESSION_DESKTOP",
    # devices and threads (CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are also set by gpuopt itself)
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "CUDA_MODULE_LOADING",
    "NVIDIA_VISIBLE_DEVICES",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    # framework switches whose names contain a marker
    "TOKENIZERS_PARALLELISM",
    "NCCL_IB_PKEY",
    "PYTORCH_CUDA_ALLOC_CONF",
)
"""Names (or ``PREFIX*``) recorded as they are when ``env_record`` names them: no name or value rule
applies. Extending it is a decision about every Target, so it lives here and in ``references/secrets.md``
(a test keeps the two equal), not in a request."""

# Words that make a name secret wherever they stand as a word of it (split at ``_``, ``-``, ``.`` and
# lower-to-upper case changes): DB_PASS, MYSQL_PWD, GITHUB_PAT, api-key, sessionCookie.
_SECRET_WORDS = frozenset(
    {
        "PASS",
        "PASSWD",
        "PASSWORD",
        "PASSWORDS",
        "PASSPHRASE",
        "PWD",
        "SECRET",
        "SECRETS",
        "TOKEN",
        "TOKENS",
        "KEY",
        "KEYS",
        "APIKEY",
        "CRED",
        "CREDS",
        "CREDENTIAL",
        "CREDENTIALS",
        "AUTH",
        "AUTHORIZATION",
        "BEARER",
        "COOKIE",
        "COOKIES",
        "SESSION",
        "SESSIONID",
        "WEBHOOK",
        "WEBHOOKS",
        "PAT",
        "PRIVATE",
        "DSN",
        "SIG",
        "SIGNATURE",
        "SAS",
        "OTP",
        "SALT",
        "NETRC",
    }
)

# Markers that make a name secret anywhere inside it (GITHUBTOKEN, SLACKWEBHOOKURL, MYAPIKEY).
_SECRET_PARTS = ("PASSW", "SECRET", "TOKEN", "APIKEY", "PRIVATEKEY", "ACCESSKEY", "WEBHOOK", "CREDENTIAL")

# Weaker markers: inside a word they suggest a secret (PKEY, XSESSIONX, OAUTHX) without proving one.
_WEAK_PARTS = ("KEY", "PASS", "PWD", "AUTH", "SESSION", "COOKIE", "CRED", "SIG", "CERT")

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_CREDENTIAL_PARAMS = (
    r"password|passwd|pwd|pass|token|access_token|refresh_token|id_token|auth|auth_token|key|api_key|"
    r"apikey|secret|client_secret|sig|signature|x-amz-signature|x-amz-credential|x-goog-signature|code"
)

_VALUE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url_credentials", re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@")),
    (
        "connection_string_credential",
        re.compile(
            r"(?:^|[;\s])(?:AccountKey|Password|Passwd|Pwd|SharedAccessKey|SharedAccessSignature|"
            r"ClientSecret|Client_Secret|ApiKey|Api_Key|Secret|Token|AccessKey|SecretKey|"
            r"aws_secret_access_key|aws_session_token)\s*[=:]\s*[^;\s]+",
            re.I,
        ),
    ),
    ("url_credential_parameter", re.compile(rf"[?&#;](?:{_CREDENTIAL_PARAMS})=[^&#\s]+", re.I)),
    ("private_key_block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})")),
    ("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("slack_webhook", re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/\S+", re.I)),
    ("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA)[A-Z0-9]{16}\b")),
    ("gcp_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("gcp_oauth_token", re.compile(r"\bya29\.[0-9A-Za-z_-]{20,}")),
    ("gcp_service_account", re.compile(r'"(?:private_key|private_key_id)"\s*:')),
    ("azure_storage_key", re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{86}==")),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|ant-)?[A-Za-z0-9_-]{20,}")),
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}")),
    ("pypi_token", re.compile(r"\bpypi-AgE[A-Za-z0-9_-]{40,}")),
    ("stripe_key", re.compile(r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # An Authorization header's value, whatever the token's shape (a short-signed JWT, an opaque token).
    ("bearer_token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{12,}", re.I)),
)

# A value "looks random" (rule 4) from this length and Shannon entropy per character on: a 16-character
# hex digest has 4 bits/char at most, base64 secrets ~5; words, paths and numbers stay well below.
_RANDOM_MIN_CHARS = 16
_RANDOM_MIN_BITS = 3.5


def verbatim(name: str) -> bool:
    """Whether ``name`` is on the allowlist (:data:`VERBATIM`)."""
    return any(fnmatchcase(name, pattern) for pattern in VERBATIM)


def name_words(name: str) -> list[str]:
    """``MYSQL_PWD`` -> ``[MYSQL, PWD]``, ``sessionCookie`` -> ``[SESSION, COOKIE]``."""
    return [w.upper() for part in re.split(r"[_\-.]+", name) for w in _WORD.findall(part)]


def secret_name(name: str) -> bool:
    """A name with a secret word (rule 2)."""
    upper = name.upper()
    return any(w in _SECRET_WORDS for w in name_words(name)) or any(p in upper for p in _SECRET_PARTS)


def weak_name(name: str) -> bool:
    """A name containing a weaker marker (rule 4)."""
    upper = name.upper()
    return any(p in upper for p in _WEAK_PARTS)


def value_rule(value: str) -> str | None:
    """The first value rule (rule 3) ``value`` matches, or None."""
    for rule, pattern in _VALUE_RULES:
        if pattern.search(value):
            return rule
    return None


def looks_random(value: str) -> bool:
    """Long enough and of high enough entropy to be a key rather than a word, a path or a number."""
    text = value.strip()
    if len(text) < _RANDOM_MIN_CHARS or any(c.isspace() for c in text):
        return False
    counts = Counter(text)
    bits = -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
    return bits >= _RANDOM_MIN_BITS


def secret_reason(name: str, value: str) -> str | None:
    """Why ``name=value`` must not be recorded (``secret_name``, ``high_entropy_value`` or a value rule's
    name), or None when it may be: the rules of the module documentation, in order."""
    if verbatim(name):
        return None
    if secret_name(name):
        return "secret_name"
    rule = value_rule(value)
    if rule is not None:
        return rule
    if weak_name(name) and looks_random(value):
        return "high_entropy_value"
    return None
