"""``gpuopt gate export | import``: one baseline as one file, for a CI cache or an artifact store.

The file is a POSIX tar: ``bundle.json`` first (``gpuopt.gate-bundle/v1``: the name, the baseline and
Target refs, and every other member with its sha256 and size), then ``baseline.json`` (the record's exact
bytes) and the frozen trees the record names (the variant's tree, so a paired check can rerun it, and the
captures): ``objects/trees/<digest>.json`` and their ``objects/blobs/<2hex>/<sha256>``.

Import reads it closed: only regular members, each listed once in ``bundle.json`` and matching its hash;
each manifest hashes to its digest and lists only blobs the bundle carries (or the root holds); the record
hashes to its id and is bound to this root's Target (``gate_target_mismatch`` otherwise). It publishes
blobs, then manifests, then the record, then the name (an interrupted import leaves only unreferenced
objects). Anything else is ``gate_bundle_invalid`` and nothing is written.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
from pathlib import Path

from gpuopt._files import check_output, open_regular
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.gate import store as gates
from gpuopt.evaluation.gate.baselines import open_root
from gpuopt.evaluation.store import Store
from gpuopt.models.evaluation.common import RecordRef
from gpuopt.models.evaluation.gate import GateBaseline
from gpuopt.models.evaluation.store import FileEntry, TreeManifest
from gpuopt.models.gate import GateBundle, GateBundleEntry, GateTransferData
from gpuopt.provenance import file_sha256

MAX_MEMBER_BYTES = 16 << 30
MAX_MEMBERS = 1_000_000


def _digests(record: GateBaseline) -> list[str]:
    out = [] if record.samples is None else [record.samples.variant.digest]
    out += [] if record.captures is None else [f.object for f in record.captures.files]
    return list(dict.fromkeys(out))


def _members(store: Store, record: GateBaseline) -> tuple[list[tuple[str, bytes]], int, int]:
    """(path, bytes) of every tree the record names that this root holds, and the tree and blob counts."""
    members: list[tuple[str, bytes]] = []
    blobs: dict[str, None] = {}
    trees = 0
    for digest in _digests(record):
        rel = f"objects/trees/{digest}.json"
        if not store.exists(rel):
            continue
        data = store.read_bytes(rel)
        if jsonio.digest(jsonio.parse(data)) != digest:
            raise InputError("object_corrupt", f"the manifest {rel} does not hash to its name", path=rel)
        members.append((rel, data))
        trees += 1
        for entry in store.manifest(digest).entries:
            if isinstance(entry, FileEntry) and entry.sha256 not in blobs:
                blobs[entry.sha256] = None
                blob = store.read_blob(entry.sha256, max_bytes=MAX_MEMBER_BYTES)
                members.append((f"objects/blobs/{entry.sha256[:2]}/{entry.sha256}", blob))
    return members, trees, len(blobs)


def _add(tar: tarfile.TarFile, path: str, data: bytes) -> None:
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mode = 0o444
    info.mtime = 0
    tar.addfile(info, io.BytesIO(data))


def _write(out: Path, bundle: GateBundle, members: list[tuple[str, bytes]]) -> None:
    check_output(out)  # a FIFO, a device, a store's record
    folder = out.parent if str(out.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=folder)
    except OSError as exc:
        raise InputError("output_unwritable", f"cannot write {out}: {exc.strerror}", path=str(out)) from None
    try:
        with os.fdopen(fd, "wb") as f, tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
            _add(tar, "bundle.json", jsonio.record_bytes(bundle))
            for path, data in members:
                _add(tar, path, data)
        os.replace(tmp, out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError("output_unwritable", f"cannot write {out}: {exc.strerror}", path=str(out)) from None


def export(root: str | Path, name: str, out: Path) -> GateTransferData:
    store, _, _ = open_root(root)
    pointer = gates.read_name(store, name)
    record = gates.read_baseline(store, pointer.baseline)
    record_bytes = store.read_bytes(gates.record_rel(record.id))
    trees, tree_count, blob_count = _members(store, record)
    members = [("baseline.json", record_bytes), *trees]
    bundle = GateBundle(
        format="gpuopt.gate-bundle/v1",
        name=name,
        baseline=pointer.baseline,
        target=record.target,
        members=[GateBundleEntry(path=p, sha256=jsonio.sha256_hex(d), size_bytes=len(d)) for p, d in members],
    )
    _write(out, bundle, members)
    return _transfer(name, out, pointer.baseline, tree_count, blob_count, None)


def _transfer(
    name: str, path: Path, ref: RecordRef, trees: int, blobs: int, created: bool | None
) -> GateTransferData:
    return GateTransferData(
        name=name,
        file=str(path),
        file_sha256=file_sha256(path),
        size_bytes=path.stat().st_size,
        baseline=ref,
        objects=trees,
        blobs=blobs,
        created=created,
    )


def _invalid(message: str, **kw: str) -> InputError:
    return InputError("gate_bundle_invalid", message, **kw)


def _member(tar: tarfile.TarFile, info: tarfile.TarInfo, path: Path) -> bytes:
    if not info.isreg() or info.size > MAX_MEMBER_BYTES:
        raise _invalid(f"{path}: member {info.name!r} is not a single regular file", path=info.name)
    handle = tar.extractfile(info)
    return b"" if handle is None else handle.read()


def _read(path: Path) -> tuple[GateBundle, dict[str, bytes]]:
    """The bundle's index and members, checked closed (see the module docstring): each member's name and
    size are checked against ``bundle.json`` before its bytes are read, so an unlisted or oversized member
    costs nothing."""
    not_listed = _invalid(f"{path}: its members are not the ones bundle.json lists", path="bundle.json")
    try:
        with open_regular(path) as f, tarfile.open(fileobj=f, mode="r:") as tar:
            infos = tar.getmembers()
            if not infos or infos[0].name != "bundle.json" or len(infos) > MAX_MEMBERS:
                raise _invalid(f"{path} does not start with bundle.json", path=str(path))
            if infos[0].size > jsonio.MAX_REQUEST_BYTES:  # refused before it is read, as any index
                raise _invalid(f"{path}: bundle.json is {infos[0].size} bytes", path="bundle.json")
            bundle = jsonio.load(GateBundle, _member(tar, infos[0], path), what="bundle.json")
            listed = {m.path: m for m in bundle.members}
            if len(listed) != len(bundle.members) or len(infos) - 1 != len(listed):
                raise not_listed
            data: dict[str, bytes] = {}
            for info in infos[1:]:
                entry = listed.get(info.name)
                if entry is None or info.name in data or info.size != entry.size_bytes:
                    raise not_listed
                data[info.name] = _member(tar, info, path)
    except InputError:
        raise
    except (tarfile.TarError, EOFError, OSError, ValueError, OverflowError) as exc:
        # tarfile raises ValueError for malformed PAX headers (a sparse map, a size past 64 bits).
        raise _invalid(f"{path} is not a readable gate bundle (a POSIX tar): {type(exc).__name__}") from None
    for member, content in data.items():
        entry = listed[member]
        if jsonio.sha256_hex(content) != entry.sha256 or len(content) != entry.size_bytes:
            raise _invalid(
                f"{path}: member {member} does not match its hash", path=member, expected=entry.sha256
            )
    return bundle, data


def _trees(store: Store, data: dict[str, bytes]) -> list[tuple[str, bytes]]:
    """Manifests and blobs in publication order (blobs first), each verified."""
    blobs: list[tuple[str, bytes]] = []
    manifests: list[tuple[str, bytes]] = []
    for member, content in data.items():
        if member.startswith("objects/blobs/"):
            sha = member.rsplit("/", 1)[-1]
            if member != f"objects/blobs/{sha[:2]}/{sha}" or jsonio.sha256_hex(content) != sha:
                raise _invalid(f"blob member {member} does not hash to its name", path=member)
            blobs.append((member, content))
        elif member.startswith("objects/trees/") and member.endswith(".json"):
            digest = member.removeprefix("objects/trees/").removesuffix(".json")
            parsed = jsonio.parse(content)
            # The bytes as the store keeps them (canonical JSON and a newline) as well as their meaning:
            # the same JSON written another way parses alike, but the store refuses such bytes later.
            if jsonio.digest(parsed) != digest or content != jsonio.record_bytes(parsed):
                raise _invalid(f"manifest member {member} does not hash to its name", path=member)
            manifest = jsonio.validate(TreeManifest, parsed, what=member)
            for entry in manifest.entries:
                if not isinstance(entry, FileEntry):
                    continue
                rel = f"objects/blobs/{entry.sha256[:2]}/{entry.sha256}"
                if rel not in data and not store.exists(rel):
                    raise _invalid(
                        f"{member} lists blob {entry.sha256}, which the bundle does not carry", path=member
                    )
            manifests.append((member, content))
        elif member != "baseline.json":
            raise _invalid(f"unexpected member {member}", path=member)
    return blobs + manifests


def import_(root: str | Path, path: Path, *, name: str | None, replace: bool) -> GateTransferData:
    store, _, tref = open_root(root)
    bundle, data = _read(path)
    chosen = gates.check_name(name or bundle.name)
    record_bytes = data.get("baseline.json")
    if record_bytes is None or jsonio.sha256_hex(record_bytes) != bundle.baseline.sha256:
        raise _invalid("baseline.json is missing or does not match bundle.json", path="baseline.json")
    record = jsonio.load(GateBaseline, record_bytes, what="baseline.json")
    if gates.baseline_id(record.model_dump(mode="json")) != record.id or record.id != bundle.baseline.id:
        raise _invalid("baseline.json does not hash to its id", path="baseline.json")
    if record.target.id != tref.id:
        raise InputError(
            "gate_target_mismatch",
            "the baseline was measured under another Target than this root's: a gate compares within one "
            "Target (a changed test set, driver or runtime is a new Target)",
            path="target",
            expected=tref.id,
            observed=record.target.id,
        )
    ordered = _trees(store, data)
    with store.lock("root", exclusive=False):
        for member, content in ordered:
            store.write_bytes(member, content)
        store.ensure_dir(gates.BASELINES)
        published = store.write_bytes(gates.record_rel(record.id), record_bytes)
    gates.set_name(store, chosen, bundle.baseline, replace=replace)
    trees = sum(1 for m, _ in ordered if m.startswith("objects/trees/"))
    return _transfer(chosen, path, bundle.baseline, trees, len(ordered) - trees, published.created)
