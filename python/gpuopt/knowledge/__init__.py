"""Advisory knowledge: cards about mechanisms and phenomena, matched on gpuopt's own facts.

    >>> from gpuopt import knowledge
    >>> knowledge.query(phenomena=["register spills"], arch="sm_90")       # KnowledgeQueryData
    >>> knowledge.match(["kernels_full.ncu-rep", "kernels.cubin"])          # KnowledgeMatchData

The registry (``cards.json``, ``sources.json``, ``facts.json``) ships inside the package; its JSON
Schemas are in ``references/knowledge/``. Cards are advisory: they say what a mechanism is, how to tell
it apart and where the primary documentation says so; they never rank or recommend.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from gpuopt.errors import InputError
from gpuopt.knowledge import arch as _arch
from gpuopt.knowledge import facts as _facts
from gpuopt.knowledge import match as _match
from gpuopt.knowledge import query as _query
from gpuopt.knowledge.audit import versions as audit_versions
from gpuopt.knowledge.registry import Registry
from gpuopt.knowledge.registry import load as _load
from gpuopt.models.knowledge import Identity, KnowledgeMatchData, KnowledgeQueryData

__all__ = ["Registry", "audit_versions", "identity_from_target", "load_registry", "match", "query"]

PathLike = str | os.PathLike[str]


def load_registry(directory: PathLike | None = None) -> Registry:
    """The bundled registry, or the one in ``directory``; an invalid one is ``knowledge_registry_invalid``."""
    return _load(None if directory is None else os.fspath(Path(directory).resolve()))


def identity_from_target(root: PathLike) -> Identity:
    """Architecture, CUDA runtime and frameworks from the frozen Target of an artifact root."""
    from gpuopt.evaluation import target as tgt
    from gpuopt.evaluation.store import Store
    from gpuopt.models.evaluation.target import Target

    loaded, _ = tgt.load(Store.open(Path(root)))
    ccs = {g.compute_capability for g in loaded.runtime_identity.observed.gpus if g.compute_capability}
    if len(ccs) > 1:
        raise InputError(
            "knowledge_identity_ambiguous",
            f"the Target's GPUs have different compute capabilities: {sorted(ccs)}",
            path=str(root),
        )
    arch = _arch.arch_from_cc(ccs.pop()) if ccs else None
    cuda = None
    frameworks: dict[str, str] = {}
    if isinstance(loaded, Target):
        cuda = loaded.runtime_identity.reported.cuda_runtime_version
        frameworks = dict(loaded.runtime_identity.reported.frameworks)
    return Identity(arch=arch, cuda=cuda, frameworks=frameworks, source=f"target:{loaded.id}")


def query(
    *,
    mechanisms: Sequence[str] = (),
    phenomena: Sequence[str] = (),
    arch: str | None = None,
    cuda: str | None = None,
    frameworks: Mapping[str, str] | None = None,
    target: PathLike | None = None,
    registry: PathLike | None = None,
    limit: int = 0,
) -> KnowledgeQueryData:
    """Candidate cards with applicability; identity from ``target`` when given (options then refine it);
    the first ``limit`` of them (0: all), compatible cards first."""
    reg = load_registry(registry)
    base = identity_from_target(target) if target is not None else Identity(source="options")
    if arch is not None:
        _arch.parse_arch(arch)
    if cuda is not None:
        _arch.parse_version(cuda, "cuda")
    for name, version in (frameworks or {}).items():
        _arch.parse_version(version, name)
    identity = Identity(
        arch=arch or base.arch,
        cuda=cuda or base.cuda,
        frameworks={**base.frameworks, **dict(frameworks or {})},
        source=base.source,
    )
    if limit < 0:
        raise InputError("usage_invalid", f"--limit {limit}", expected="0 (all) or a positive count")
    hits = _query.query(reg, identity, list(mechanisms), list(phenomena))
    return KnowledgeQueryData(
        registry_version=reg.version,
        registry_sha256=reg.sha256,
        identity=identity,
        normalisation=_query.NORMALISATION,
        hits=hits[:limit] if limit else hits,
        total_hits=len(hits),
    )


def match(evidence: Sequence[PathLike], *, registry: PathLike | None = None) -> KnowledgeMatchData:
    """Per kernel, function, device or torch op of each evidence file: the cards whose rules hold."""
    reg = load_registry(registry)
    read = [_facts.read(Path(p)) for p in evidence]
    files, subjects = _match.match(reg, read)
    return KnowledgeMatchData(
        registry_version=reg.version, registry_sha256=reg.sha256, evidence=files, subjects=subjects
    )
