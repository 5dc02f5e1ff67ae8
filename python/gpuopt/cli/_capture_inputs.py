"""``gpuopt profile diff`` inputs: files as given, ``cap:`` references resolved to their frozen captures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuopt.evaluation.capture import refs
from gpuopt.models.profile import CaptureFacts


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


def inputs_of(given: tuple[str, ...], root: Path) -> Inputs:
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
