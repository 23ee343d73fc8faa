"""The lab evidence scorers, assembled: the column scorers (columns), the text axes, a method
named by a word tests share (shared_methods) and the usual-variant priors (text), the
plainer-test prior (plainer) and the common-test rank (commonness), in the order their evidence
is listed."""
from __future__ import annotations

from .columns import CategoryScorer, UnitScorer
from .commonness import Shares, UsageScorer
from .plainer import PlainerTestScorer
from .shared_methods import SharedMethodScorer
from .specimen_fields import TargetFields
from .text import (ComponentBackoff, SpecimenFieldScorer, SpecimenScorer, states_an_axis,
                   text_scorers, usual_scorers)


def lab_scorers(usage: bool = True, off: tuple[str, ...] = (), unit_examples: bool = True,
                si: bool = False, shares: Shares | None = None, usage_share: float = 1.0,
                open_rows_only: bool = False, methodless: bool = False,
                fields: TargetFields | None = None) -> list:
    """The lab evidence scorers less those named in `off` (codemap eval's ablations). Without
    `usage` the usage scorer still breaks exact mass/moles ties (UsageScorer.ties_only); with it,
    its bonus at `usage_share` of its weight (across languages: codemap.rank.prepare.ranking_for),
    with `open_rows_only` only for rows that state no axis; `si`: towards the molar twin
    (--unit-system); `fields`: the target's specimen fields (specimen_fields.target_fields)."""
    usage_scorer = UsageScorer(weight=UsageScorer.weight * usage_share, ties_only=not usage, si=si,
                               states_an_axis=states_an_axis if open_rows_only else None)
    scorers = (UnitScorer(use_examples=unit_examples), SpecimenScorer(),
               SpecimenFieldScorer(fields=fields or TargetFields()), CategoryScorer(),
               usage_scorer, *text_scorers(), SharedMethodScorer(),
               *usual_scorers(shares, methodless),
               PlainerTestScorer(), ComponentBackoff())
    return [s for s in scorers if s.name not in off]
