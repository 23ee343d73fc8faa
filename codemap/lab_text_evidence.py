"""Lab evidence read from the row's TEXT, and usual-variant priors for what the text leaves out.

Same interface as the scorers of codemap.labs (`name`, `score`, `for_row`), one scorer per signal
so a learned ranker can weigh each on its own:

- text_specimen, text_property, text_timing, text_method: the row's text read as LOINC axes
  (codemap.loinc_parts) against the candidate's axes; agreement is a bonus, a contradiction a
  malus, with the reason ("text says 24 hr urine; candidate is 24 hour Urine"). A fact the row
  also gives in a column (a specimen or unit the column scorers understand) is left to those
  scorers, so it is not counted twice.
- usual_specimen, usual_method: when the row states no specimen / no method, prefer the
  candidate whose specimen / method carries the larger share of its component's ordering
  (codemap.loinc_commonness, learned from the LOINC common-test ranks).

Every scorer speaks only about LOINC codes (by their check digit), so a non-LOINC target ranks
as before. Default adjustments are a priori: the size of the column scorers' for the same fact
(specimen 0.03 / -0.08), smaller where the text is a weaker witness (property and method words
are ambiguous: "count" may name a percentage panel), and at most 0.03 for the priors.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping

from .evidence import NO_EVIDENCE, Evidence
from .labs import specimen_group
from .loinc_commonness import usual_methods, usual_systems
from .loinc_parts import Axes, concept_axes, is_loinc_code, text_axes
from .units import parse_unit

_is_loinc = functools.lru_cache(maxsize=1 << 16)(is_loinc_code)


def _loinc_axes(concept: Mapping[str, object]) -> Axes | None:
    """The candidate's axes, None for a code that is not a LOINC code."""
    return concept_axes(concept) if _is_loinc(str(concept.get("code", ""))) else None


def _row_axes(row: Mapping[str, str]) -> Axes:
    return text_axes(str(row.get("text", "") or ""))


def _column_specimen(row: Mapping[str, str]) -> bool:
    return bool(specimen_group(row.get("specimen", "") or ""))


def _column_unit(row: Mapping[str, str]) -> bool:
    return bool(parse_unit(row.get("unit", "") or "").properties)


class _BoundScorer:
    """`score` through `for_row`, so both ways share one code path (as codemap.labs scorers)."""

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        bound = self.for_row(row)
        return NO_EVIDENCE if bound is None else bound(concept)


@dataclass(frozen=True)
class TextSpecimenScorer(_BoundScorer):
    """The specimen the text names (", SERUM", "urine") against the candidate's system."""

    match: float = 0.03
    mismatch: float = -0.08
    name: str = "text_specimen"

    def for_row(self, row: Mapping[str, str]):
        if _column_specimen(row):  # the specimen scorer already reads this fact from the column
            return None
        axes = _row_axes(row)
        return functools.partial(self._score, axes) if axes.group else None

    def _score(self, text: Axes, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.group:
            return NO_EVIDENCE
        reason = f"text says {text.said['system']}; candidate is {axes.system}"
        return Evidence(self.match if axes.group == text.group else self.mismatch, reason)


@dataclass(frozen=True)
class TextPropertyScorer(_BoundScorer):
    """What the text says is measured ("(%)", "Count", "Ratio", "level") against the PROPERTY."""

    match: float = 0.03
    mismatch: float = -0.05
    name: str = "text_property"

    def for_row(self, row: Mapping[str, str]):
        if _column_unit(row):  # the unit scorer already reads the property from the unit
            return None
        axes = _row_axes(row)
        return functools.partial(self._score, axes) if axes.properties else None

    def _score(self, text: Axes, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.properties:
            return NO_EVIDENCE
        prop = next(iter(axes.properties))
        reason = f"text says {text.said['property']}; candidate is {prop}"
        return Evidence(self.match if prop in text.properties else self.mismatch, reason)


@dataclass(frozen=True)
class TextTimingScorer(_BoundScorer):
    """A collection period in the text ("24 hr") against the candidate's timing (24H, Pt)."""

    match: float = 0.03
    mismatch: float = -0.08
    name: str = "text_timing"

    def for_row(self, row: Mapping[str, str]):
        axes = _row_axes(row)
        return functools.partial(self._score, axes) if axes.timing else None

    def _score(self, text: Axes, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.timing:
            return NO_EVIDENCE
        reason = f"text says {text.said['timing']}; candidate is {axes.timing}"
        return Evidence(self.match if axes.timing == text.timing else self.mismatch, reason)


@dataclass(frozen=True)
class TextMethodScorer(_BoundScorer):
    """A method in the text ("Automated count", "dipstick") against the candidate's method. A
    method-less candidate is no contradiction: LOINC leaves the method out of the everyday code."""

    match: float = 0.03
    mismatch: float = -0.03
    name: str = "text_method"

    def for_row(self, row: Mapping[str, str]):
        axes = _row_axes(row)
        return functools.partial(self._score, axes) if axes.methods else None

    def _score(self, text: Axes, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        method = next(iter(axes.methods), "") if axes is not None else ""
        if not method:
            return NO_EVIDENCE
        reason = f"text says {text.said['method']}; candidate is by {method}"
        return Evidence(self.match if method in text.methods else self.mismatch, reason)


@dataclass(frozen=True)
class UsualSpecimenScorer(_BoundScorer):
    """No specimen stated (column or text): prefer the component's usually ordered specimen,
    in proportion to its share of the component's ranked ordering."""

    weight: float = 0.03
    name: str = "usual_specimen"

    def for_row(self, row: Mapping[str, str]):
        if _column_specimen(row) or _row_axes(row).group:
            return None
        return self._score

    def _score(self, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.group:
            return NO_EVIDENCE
        share = usual_systems(axes.component).get(axes.group, 0.0)
        if share <= 0:
            return NO_EVIDENCE
        return Evidence(self.weight * share, f"no specimen stated; {axes.group} is "
                                             f"{share:.0%} of {axes.component} orders")


@dataclass(frozen=True)
class UsualMethodScorer(_BoundScorer):
    """No method stated in the text: prefer the component's usual method (mostly none), in
    proportion to its share of the component's ranked ordering (overall share for a component
    the lists do not rank)."""

    weight: float = 0.03
    name: str = "usual_method"

    def for_row(self, row: Mapping[str, str]):
        return None if _row_axes(row).methods else self._score

    def _score(self, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None:
            return NO_EVIDENCE
        method = next(iter(axes.methods), "")
        share = usual_methods(axes.component).get(method, 0.0)
        if share <= 0:
            return NO_EVIDENCE
        said = f"by {method}" if method else "no method"
        return Evidence(self.weight * share, f"no method stated; {said} is {share:.0%} of "
                                             f"{axes.component or 'ranked'} orders")


def text_scorers() -> list:
    """The four text-axis scorers."""
    return [TextSpecimenScorer(), TextPropertyScorer(), TextTimingScorer(), TextMethodScorer()]


def usual_scorers() -> list:
    """The two usual-variant priors."""
    return [UsualSpecimenScorer(), UsualMethodScorer()]
