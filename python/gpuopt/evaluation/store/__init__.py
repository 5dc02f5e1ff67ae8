"""The artifact store: one root's files, records, objects, ledger and locks (the store layer).

The public surface, which every other module imports from here and only from here
(``tests/test_import_layers.py`` refuses an import of a module inside this package from outside it):

- :class:`Store` — one artifact root: ``open``, ``require_store``; records (``write_record``,
  ``write_bytes``, ``replace_bytes``, ``read_bytes``, ``read_record`` with its sha256 check, ``exists``,
  ``remove``, ``ensure_dir``, ``path``); objects (``freeze``, ``materialize``, ``manifest``,
  ``read_blob``); ``lock`` (``flock`` on ``locks/<name>.lock``); the ledger (``ledger_append``,
  ``ledger``); ``target_ref``. :class:`Published` is what a write returns.
- :data:`LEDGER` (``ledger/records.jsonl``) and :data:`TEMP_PREFIX` (the prefix of files a crash may leave).
- :func:`ledger_keys` — what a record's ledger line keys (what listings and gates filter on).
- :func:`hash_tree`, :func:`hash_tree_manifest` — a file or tree hashed as a freeze would, storing nothing.
- :func:`scan_records`, :func:`reindex` — every record file of a root; the ledger rebuilt from them.
- :data:`ENV_KEY`, :func:`create_env_key`, :func:`env_key`, :func:`env_digest`, :func:`key_problem` — the
  root's private key for inherited-variable digests (``keys/env.key``).

Inside: :mod:`.root` (the :class:`Store`), :mod:`.trees`, :mod:`.ledger` (keys, scan, reindex),
:mod:`.digest_key`. The record readers over the store (:mod:`gpuopt.evaluation.records`,
:mod:`gpuopt.evaluation.target`), the strict JSON reader (:mod:`gpuopt.evaluation.jsonio`) and the
verification (:mod:`gpuopt.evaluation.verify`) are the store layer's other modules.
"""

from __future__ import annotations

from gpuopt.evaluation.store.digest_key import ENV_KEY, create_env_key, env_digest, env_key, key_problem
from gpuopt.evaluation.store.ledger import ledger_keys, reindex, scan_records
from gpuopt.evaluation.store.root import LEDGER, TEMP_PREFIX, Published, Store
from gpuopt.evaluation.store.trees import hash_tree, hash_tree_manifest

__all__ = [
    "ENV_KEY",
    "LEDGER",
    "TEMP_PREFIX",
    "Published",
    "Store",
    "create_env_key",
    "env_digest",
    "env_key",
    "hash_tree",
    "hash_tree_manifest",
    "key_problem",
    "ledger_keys",
    "reindex",
    "scan_records",
]
