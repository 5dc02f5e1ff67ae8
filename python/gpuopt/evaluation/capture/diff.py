"""``gpuopt profile diff`` over capture records: ``cap:INVOCATION/VARIANT[/CASE]`` references resolved to
their frozen captures (paired repeat by repeat when both sides are of one capture invocation), the diff
of :mod:`gpuopt.profile`, and with ``cite`` its citation by a target or final-audit result
(:mod:`gpuopt.evaluation.capture.citations`).

    >>> from gpuopt.evaluation.capture import diff
    >>> answer = diff.diff_document(["cap:inv-.../original"], ["cap:inv-.../candidate"], root="root")
    >>> answer.data.counts.flagged, answer.table
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuopt import profile
from gpuopt.evaluation.capture import citations, refs
from gpuopt.models.profile import CaptureFacts

if TYPE_CHECKING:
    from gpuopt.answer import Answer
    from gpuopt.models.profile import Dimension, ProfileDiffData


@dataclass(frozen=True)
class Inputs:
    """One side's capture files, with the capture each came from (None for a plain file)."""

    paths: list[Path]
    origins: list[refs.Resolved | None]

    def paired_with(self, other: Inputs) -> bool:
        """Both sides are captures of one capture invocation, interleaved repeat by repeat."""
        mine = [o for o in self.origins if o is not None]
        theirs = [o for o in other.origins if o is not None]
        if len(mine) != len(self.origins) or len(theirs) != len(other.origins):
            return False
        return refs.paired(mine, theirs)

    def label(self, facts: list[CaptureFacts]) -> list[CaptureFacts]:
        """The facts with each capture's path shown as its reference (cap:ID/VARIANT/CASE#REPEAT)."""
        out = []
        for fact, origin in zip(facts, self.origins, strict=True):
            if origin is not None:
                name = f"cap:{origin.invocation_id}/{origin.variant}/{origin.case_id}#{origin.repeat}"
                fact = fact.model_copy(update={"path": name})
            out.append(fact)
        return out


def inputs_of(given: Sequence[str], root: str | Path) -> Inputs:
    """Files as given, and each ``cap:`` reference as every capture file it names (in ``root``)."""
    paths: list[Path] = []
    origins: list[refs.Resolved | None] = []
    for text in given:
        if refs.is_ref(text):
            for found in refs.resolve(text, root):
                paths.append(found.path)
                origins.append(found)
        else:
            paths.append(Path(text))
            origins.append(None)
    return Inputs(paths, origins)


def diff_document(
    baseline: Sequence[str],
    candidate: Sequence[str],
    *,
    root: str | Path = ".",
    cite: str | None = None,
    by: Dimension = "kernel",
    paired: bool = False,
    fdr: float = 0.05,
    min_effect: float = 0.0,
    marker: str | None = None,
    nvtx: str | None = None,
    limit: int = 50,
    sort: str | None = None,
) -> Answer[ProfileDiffData]:
    """``gpuopt profile diff``: capture files or ``cap:`` references on each side (see
    :func:`gpuopt.profile.diff_files`; paired when asked, or when both sides are captures of one capture
    invocation); with ``cite`` (cap: inputs only), the diff is recorded as cited by that invocation's
    target or final-audit result in ``root``, and the document names the citation."""
    from gpuopt.answer import Answer
    from gpuopt.provenance import file_identity

    base, cand = inputs_of(baseline, root), inputs_of(candidate, root)
    result = profile.diff_files(
        base.paths,
        cand.paths,
        by=by,
        paired=paired or base.paired_with(cand),
        fdr=fdr,
        min_effect=min_effect,
        marker=marker,
        nvtx=nvtx,
    )
    data, table = profile.diff_data(result, limit=limit, sort=sort)
    data = data.model_copy(
        update={"baseline": base.label(data.baseline), "candidate": cand.label(data.candidate)}
    )
    if cite is not None:
        recorded, _ = citations.cite(
            root, cite, data, result.table.to_dicts(), list(baseline), list(candidate)
        )
        data = data.model_copy(update={"citation": recorded.id})
    inputs = [file_identity(p) for p in (*base.paths, *cand.paths) if p.is_file()]
    return Answer(data, inputs, tables={"keys": table})
