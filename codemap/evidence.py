"""Domain evidence that re-scores ranked candidates, with a reason a reviewer can read.

An evidence scorer looks at one source row's fields (`text`, `unit`, `specimen`, `category`, and
any other column of the code list) and one candidate concept's attributes (the vocabulary's concept
row: `code`, `name`, `property`, `system`, `class`…) and returns a score adjustment plus a short
explanation. Lab evidence (`codemap.labs`) is one set of scorers; drug evidence plugs in the same
way. Ranking adds the adjustments to the fused name score and writes the reasons to `explanation`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence


@dataclass(frozen=True)
class Evidence:
    """A score adjustment (added to the candidate's score) and why; reason "" means no opinion."""

    adjust: float = 0.0
    reason: str = ""
    contradicts: bool = False  # the candidate cannot be right (e.g. property contradicts unit)


NO_EVIDENCE = Evidence()


class EvidenceScorer(Protocol):
    """Anything with a `name` and a `score(row, concept) -> Evidence` method."""

    name: str

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence: ...


def weigh(scorers: Sequence[EvidenceScorer], row: Mapping[str, str],
          concept: Mapping[str, object]) -> tuple[float, list[str], bool]:
    """Sum of the scorers' adjustments, their reasons, and whether any contradicts the candidate."""
    total, reasons, contradicted = 0.0, [], False
    for scorer in scorers:
        found = scorer.score(row, concept)
        total += found.adjust
        contradicted |= found.contradicts
        if found.reason:
            reasons.append(f"{found.reason} ({found.adjust:+.2f})" if found.adjust else found.reason)
    return total, reasons, contradicted
