"""``gpuopt knowledge query|match``: advisory cards, their applicability, and the rules that hold."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.cli._params import count
from gpuopt.cli._registry import Group
from gpuopt.cli._render import section, table
from gpuopt.errors import InputError

if TYPE_CHECKING:
    from gpuopt.models.knowledge import KnowledgeMatchData, KnowledgeQueryData

_REGISTRY = click.option(
    "--registry",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="A registry folder (cards.json, sources.json, facts.json) instead of the bundled one.",
)


@click.group(cls=Group)
def knowledge() -> None:
    """Advisory knowledge cards: what a mechanism is, how to tell it apart, where NVIDIA, PyTorch,
    Triton or NCCL documentation says so. Facts and material only: nothing is ranked or recommended."""


def _frameworks(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, version = value.partition("=")
        if not sep or not name or not version:
            raise InputError(
                "usage_invalid",
                f"--framework {value!r}",
                expected="NAME=VERSION, e.g. torch=2.11",
                observed=value,
            )
        key = name.strip().lower()
        if key in out and out[key] != version.strip():
            # The last one won, silently: two versions of one framework is a mistake to name.
            raise InputError(
                "usage_invalid",
                f"--framework {key} is given twice, with {out[key]} and {version.strip()}",
                expected="each framework once",
                observed=f"{key}={out[key]}, {key}={version.strip()}",
            )
        out[key] = version.strip()
    return out


def _render_query(data: KnowledgeQueryData) -> str:
    ident = data.identity
    frameworks = ", ".join(f"{k}={v}" for k, v in ident.frameworks.items()) or None
    head = section(
        f"knowledge query ({len(data.hits)} of {data.total_hits} cards; registry v{data.registry_version})",
        [("identity", ident.source), ("arch", ident.arch), ("cuda", ident.cuda), ("frameworks", frameworks)],
    )
    rows = []
    for hit in data.hits:
        why = "; ".join(f"{m.query!r} ~ {m.matched!r} ({m.via})" for m in hit.matches)
        reasons = "; ".join(
            f"{r.kind} {r.field}: needs {r.expected}, have {r.actual or 'not stated'}"
            for r in hit.applicability.reasons
        )
        rows.append((hit.card.id, hit.applicability.relation, reasons or "—", why or "—"))
    out = [head, table(["card", "applicability", "reasons", "matched"], rows)]
    if len(data.hits) <= 3:
        for hit in data.hits:
            card = hit.card
            out.append(
                section(
                    f"{card.id}: {card.title}",
                    [
                        ("mechanism", card.mechanism),
                        ("question", card.distinguishing_question),
                        ("evidence", "; ".join(card.required_evidence)),
                        ("counter", "; ".join(card.counter_signals) or None),
                        ("invalidators", "; ".join(card.invalidators) or None),
                    ],
                )
            )
            out.append(
                "  sources:\n"
                + "\n".join(
                    f"    {s.title} ({s.version}, reviewed {s.last_reviewed}): {s.locator}"
                    for s in card.sources
                )
            )
    return "\n\n".join(out)


@knowledge.command("query")
@click.option(
    "--mechanism", "mechanisms", multiple=True, metavar="KEY", help="A card id (or name); repeatable."
)
@click.option(
    "--phenomenon", "phenomena", multiple=True, metavar="TEXT", help="What you observe; repeatable."
)
@click.option("--arch", help="Exact architecture: sm_90 and sm_90a differ.")
@click.option("--cuda", help="CUDA version, e.g. 13.0.")
@click.option("--framework", "frameworks", multiple=True, metavar="NAME=VERSION", help="e.g. torch=2.11.")
@click.option(
    "--target",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Artifact root: identity from its frozen Target (options override it).",
)
@click.option(
    "--limit",
    type=count(0),
    default=0,
    show_default=True,
    help="Show only the first N cards (compatible ones first); 0: all.",
)
@_REGISTRY
@command("gpuopt.knowledge.query/v1")
def query(
    mechanisms: tuple[str, ...],
    phenomena: tuple[str, ...],
    arch: str | None,
    cuda: str | None,
    frameworks: tuple[str, ...],
    target: Path | None,
    limit: int,
    registry: Path | None,
) -> Outcome:
    """Candidate cards with applicability (compatible, related, incompatible) and why each matched.

    \b
    Examples:
      gpuopt knowledge query --phenomenon "register spills" --arch sm_90 --limit 3
      gpuopt knowledge query --phenomenon sm__pipe_tensor_op_hmma_cycles_active.pct_of_peak
      gpuopt knowledge query --mechanism cuda_graphs --cuda 13.0 --framework torch=2.11
      gpuopt knowledge query --target runs/decode --phenomenon "launch overhead" --json
    """
    from gpuopt import knowledge as kn

    data = kn.query(
        mechanisms=mechanisms,
        phenomena=phenomena,
        arch=arch,
        cuda=cuda,
        frameworks=_frameworks(frameworks),
        target=target,
        registry=registry,
        limit=limit,
    )
    return Outcome(data=data, render=lambda: _render_query(data))


def _render_match(data: KnowledgeMatchData) -> str:
    files = table(
        ["evidence", "kind", "subjects", "trace shape"],
        [
            (f.path, f.kind, f.subjects, ", ".join(f"{k}={v}" for k, v in f.trace_shape.items()) or "—")
            for f in data.evidence
        ],
    )
    rows = []
    for subject in data.subjects:
        for signal in subject.cards:
            facts = "; ".join(v.text for v in signal.signals)
            rows.append((Path(subject.evidence).name, subject.name, signal.card, facts))
    body = table(["evidence", "subject", "card", "facts"], rows) if rows else "no card's signals hold"
    return f"{files}\n\n{body}"


@knowledge.command("match")
@click.argument(
    "evidence",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, exists=True),
    help="Evidence files: ncu reports or CSVs, nsys exports, Kineto traces, SASS listings or cubins, "
    "ptxas -v or cuobjdump -res-usage reports (kinds detected from the files).",
)
@_REGISTRY
@command("gpuopt.knowledge.match/v1")
def match(evidence: tuple[Path, ...], registry: Path | None) -> Outcome:
    """Per kernel, function, device or torch op: the cards whose rules hold, with values and thresholds.

    EVIDENCE: ncu reports or CSVs, nsys exports, Kineto traces, SASS listings or cubins, ptxas -v or
    cuobjdump -res-usage reports (kinds detected from the files).

    \b
    Examples:
      gpuopt knowledge match kernels_full.ncu-rep kernels_sm90.cubin
      gpuopt knowledge match decode_eager.sqlite --json
    """
    from gpuopt import knowledge as kn
    from gpuopt.provenance import file_identity

    data = kn.match(evidence, registry=registry)
    inputs = [file_identity(p) for p in evidence if p.is_file()]
    return Outcome(data=data, render=lambda: _render_match(data), inputs=inputs)
