"""Domain evidence that re-scores ranked candidates, with a reason a reviewer can read.

An evidence scorer looks at one source row's fields (`text`, `unit`, `specimen`, `category`, and
any other column of the code list) and one candidate concept's attributes (the vocabulary's concept
row: `code`, `name`, `property`, `system`, `class`…) and returns a score adjustment plus a short
explanation. Lab evidence (`codemap.domains.lab.columns`) is one set of scorers; drug evidence plugs in the
same way (`codemap.domains.drug.agreement`). Ranking adds the adjustments to the fused name score, orders
candidates by the sum of the evidence tiers first (hard guarantees, e.g. "a contradicting strength
never outranks an agreeing one") and then by that score, and writes the reasons to `explanation`.

A scorer may also bind itself to one row (`for_row(row) -> callable(concept) -> Evidence`, or None
when it has no opinion on any concept for that row): ranking calls it once per row, so the row's
side of the work (parsing its unit, finding its category column) is not redone for each of the
row's ~50 candidates, and a scorer that cannot speak (no unit, no specimen) costs nothing.

A scorer may also offer extra candidates for a row (`candidates(row) -> set of concept codes`):
concepts the name indexes may miss but the domain knows are relevant (a brand's products).

A scorer may also say which candidates the row cannot tell apart by name
(`sibling_key(row) -> callable(concept) -> key or None`): candidates with one key share the best
name score among them, so evidence, not encoder noise, orders them (a LOINC component's variants
when the row states no specimen or property: codemap.domains.lab.text.ComponentBackoff).

A scorer may also name each concept's family (`family(concept) -> key or None`: a LOINC code's
analyte): ranking adds every concept of a row's best-matching families to its candidates, so a
family's commonest member can be chosen whatever its name looks like.

A reason may end with a mark: ✔ the candidate agrees with the row, ✘ it contradicts the row, ~
neither: it states what the row does not say, agrees in part, or is preferred by a prior where
the row says nothing (a common test, the usual specimen). The confidence model reads the ~
adjustments apart from the others (codemap.decide.confidence).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence


@dataclass(frozen=True)
class Evidence:
    """A score adjustment (added to the candidate's score) and why; reason "" means no opinion."""

    adjust: float = 0.0
    reason: str = ""
    contradicts: bool = False  # the candidate cannot be right (e.g. property contradicts unit)
    tier: int = 0  # sorted before the score: a higher tier sum always ranks above a lower one


NO_EVIDENCE = Evidence()


class EvidenceScorer(Protocol):
    """Anything with a `name` and a `score(row, concept) -> Evidence` method."""

    name: str

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence: ...


ConceptScorer = Callable[[Mapping[str, object]], Evidence]  # one scorer bound to one row


def for_row(scorers: Sequence[EvidenceScorer], row: Mapping[str, str]) -> list[ConceptScorer]:
    """The scorers bound to `row`, in order, leaving out those with no opinion on this row."""
    bound = []
    for scorer in scorers:
        bind = getattr(scorer, "for_row", None)
        if bind is None:
            bound.append(lambda concept, scorer=scorer: scorer.score(row, concept))
        elif (scores := bind(row)) is not None:
            bound.append(scores)
    return bound


def weigh(scorers: Sequence[EvidenceScorer], row: Mapping[str, str],
          concept: Mapping[str, object]) -> tuple[float, list[str], bool, int]:
    """Sum of the scorers' adjustments, their reasons, whether any contradicts the candidate, and
    the sum of their tiers."""
    return weigh_bound(for_row(scorers, row), concept)


def weigh_bound(bound: Sequence[ConceptScorer],
                concept: Mapping[str, object]) -> tuple[float, list[str], bool, int]:
    """`weigh` with the scorers already bound to the row (`for_row`): what ranking calls per
    candidate. A scorer left out for having no opinion would have added 0, no reason, no tier."""
    total, reasons, contradicted, tier = 0.0, [], False, 0
    for scores in bound:
        found = scores(concept)
        total += found.adjust
        tier += found.tier
        contradicted |= found.contradicts
        if found.reason:
            reasons.append(f"{found.reason} ({found.adjust:+.2f})" if found.adjust else found.reason)
    return total, reasons, contradicted, tier


def extra_candidates(scorers: Sequence[EvidenceScorer], row: Mapping[str, str]) -> set:
    """Concept codes the scorers offer for this row beyond the name indexes' pool."""
    found: set = set()
    for scorer in scorers:
        offer = getattr(scorer, "candidates", None)
        if offer is not None:
            found |= offer(row)
    return found


def sibling_keys(scorers: Sequence[EvidenceScorer], row: Mapping[str, str]):
    """The first scorer's `sibling_key` bound to `row`, None when no scorer groups candidates."""
    for scorer in scorers:
        group = getattr(scorer, "sibling_key", None)
        if group is not None:
            return group(row)
    return None


def family_of(scorers: Sequence[EvidenceScorer]):
    """The first scorer's `family` (concept → key or None), None when no scorer names families."""
    return next((scorer.family for scorer in scorers if hasattr(scorer, "family")), None)
