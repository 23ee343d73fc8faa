"""How commonly a LOINC code, and each specimen and method of a component, is ordered.

Learned from the shipped LOINC Top-2000 lists (codemap/data/loinc, LICENSE-LOINC.txt beside
them), whose rank orders tests by how often US labs report them:

- `code_rank(code)`: a code's rank, for ANY target whose codes are LOINC codes (built-in, store
  import, a user's table), not only one that carries a rank column;
- `usual_systems(component)`, `usual_methods(component)`: how a component's ordering is shared
  among systems (as the long names write them: "Serum or Plasma", "Blood") and methods, each
  ranked code weighted 1/rank (test volumes fall off roughly as 1/rank: Zipf). "Urate" is
  ordered mostly in serum/plasma, "Neutrophils/100 leukocytes" mostly by automated count: the
  everyday variant of a bare analyte, from data rather than a list of tests. Systems, not
  specimen groups: serum/plasma and whole blood are one group, yet "Sodium" is ordered in the
  one 25 times as often as in the other.
"""
from __future__ import annotations

import functools
from collections import defaultdict

import math
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ..evidence import NO_EVIDENCE, Evidence
from .loinc import concept_axes, is_loinc_code, long_name_system, ranked_codes


@functools.lru_cache(maxsize=1)
def _ranks() -> dict[str, int]:
    table = ranked_codes()
    return dict(zip(table["code"], table["rank"]))


@functools.lru_cache(maxsize=1)
def _borrowed() -> frozenset[str]:
    table = ranked_codes()
    return frozenset(table.loc[~table["counted"], "code"])


def borrowed_rank(code: str) -> bool:
    """True for a code only the shipped SI list ranks: a molar twin at its US code's rank, whose
    own orders were not counted."""
    return str(code).strip() in _borrowed()


def code_rank(code: str) -> int:
    """The shipped common-test rank of a LOINC code (1 = most common), 0 when unranked or not a
    LOINC code."""
    code = str(code).strip()
    return _ranks().get(code, 0) if is_loinc_code(code) else 0


@dataclass(frozen=True)
class Shares:
    """component → {system: share}, component → {method: share} ("" = no method), and the
    share of ordering that goes to method-less codes overall."""

    systems: dict
    methods: dict
    methodless: float

    def usual_systems(self, component: str) -> dict[str, float]:
        """Share of the component's ordering per system (loinc.long_name_system; {} when the
        component is not ranked)."""
        return self.systems.get(component.lower(), {})

    def usual_methods(self, component: str) -> dict[str, float]:
        """Share of the component's ordering per method ("" = none); for a component the lists
        do not rank, the overall split between method-less and any-method codes."""
        found = self.methods.get(component.lower())
        return found if found is not None else {"": self.methodless}


@functools.lru_cache(maxsize=8)
def usage_shares(named: tuple[tuple[str, str], ...] = ()) -> Shares:
    """The shares, each ranked code counted under its component as a target names it (`named`:
    (code, component) pairs, sorted), else as its shipped long name reads. A LOINC release
    writes COMPONENT otherwise for a third of the ranked codes ("Bilirubin" for 1975-2, whose
    long name reads "Bilirubin.total"; "pH" for urine and blood pH alike): keyed by the long
    names alone, a release's candidates would miss their priors or borrow another test's
    (benchmarks/results/release-components/RULE.md)."""
    components = dict(named)
    systems: dict = defaultdict(lambda: defaultdict(float))
    methods: dict = defaultdict(lambda: defaultdict(float))
    methodless = total = 0.0
    for row in ranked_codes().to_dict("records"):
        axes, weight = concept_axes(row), 1.0 / row["rank"]
        component = components.get(row["code"], axes.component)
        method = next(iter(axes.methods), "")
        system = long_name_system(row)
        if system:
            systems[component][system] += weight
        methods[component][method] += weight
        methodless += weight * (method == "")
        total += weight
    return Shares(_normalise(systems), _normalise(methods), methodless / total)


def per_target(read: Callable):
    """`read(concepts)` computed once per target frame: a ranking builds its scorers anew for
    every settings (eval: 16) while the target's frame stays the same object. Only the last
    frame is kept (one target per run); the frame itself, not an equal copy, is the key."""
    last: list = []  # [(the concepts frame, what `read` gave)]

    @functools.wraps(read)
    def once(concepts):
        if not last or last[0][0] is not concepts:
            last[:] = [(concepts, read(concepts))]
        return last[0][1]
    return once


@per_target
def target_shares(concepts) -> Shares:
    """usage_shares for a target's concepts (a frame with `code` and what concept_axes reads):
    its ranked codes under the components it gives them."""
    ranked = set(_ranks())
    held = concepts[concepts["code"].isin(ranked)].drop_duplicates("code")
    named = ((code, concept_axes(row).component)
             for code, row in zip(held["code"], held.to_dict("records")))
    return usage_shares(tuple(sorted((c, comp) for c, comp in named if comp)))


def _normalise(table: dict) -> dict:
    out = {}
    for key, counts in table.items():
        total = sum(counts.values())
        out[key] = {value: count / total for value, count in counts.items()}
    return out


def usual_systems(component: str) -> dict[str, float]:
    """Share of the component's ordering per system, components as the shipped long names
    read them (Shares.usual_systems)."""
    return usage_shares().usual_systems(component)


@dataclass(frozen=True)
class UsageScorer:
    """Prefer commonly ordered tests: LOINC's common test rank (1 = most common; 0 or blank =
    unranked), on a log scale, as RELMA sorts by it. Local lists are dominated by common tests.
    A concept without a rank of its own takes its code's rank in the shipped Top-2000 lists."""

    weight: float = 0.08
    scale: float = 10_000.0  # ranks at or beyond this get no bonus
    # A molar twin shares its US code's rank (borrowed_rank) and, when the row states no unit,
    # its name score too (the component back-off): the hair sends that exact tie to the code
    # whose orders were counted, while a unit, a unit word or any name gap still decides.
    # benchmarks/results/lab-text/RULE-unit-twins.md
    borrowed_hair: float = 0.001
    # The hair alone, no rank bonus: where the prior is off (across languages, whose flat name
    # scores its bonus would outweigh), exact twin ties still go to the counted code
    # (benchmarks/results/lab-text/RULE-crosslingual-twins.md).
    ties_only: bool = False
    # The list reports SI units (--unit-system si): the hair goes the other way, so an exact tie
    # goes to the molar twin. The calibrations' ranking key leaves it out: a hair moves no
    # confidence feature but the order of an exact tie.
    si: bool = False
    # Given: the prior's bonus only for rows this says state no axis; a row that states one keeps
    # the tie-break alone (across languages: benchmarks/results/crosslingual-usage/RULE-2.md).
    states_an_axis: Callable[[Mapping[str, str]], bool] | None = None
    name: str = "usage"

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        return self.for_row(row)(concept)

    def for_row(self, row: Mapping[str, str]):
        if self.states_an_axis is not None and not self.ties_only and self.states_an_axis(row):
            return replace(self, ties_only=True).score_concept
        return self.score_concept

    def score_concept(self, concept: Mapping[str, object]) -> Evidence:
        try:
            rank = int(float(concept.get("rank", 0) or 0))
        except (TypeError, ValueError):
            rank = 0
        if rank <= 0:  # a target without a rank column (a user's table of LOINC codes)
            rank = code_rank(str(concept.get("code", "")))
        hair = self.borrowed_hair if self.si else -self.borrowed_hair
        twin = "(SI twin, the list reports SI)" if self.si else "(SI twin)"
        if self.ties_only:
            return (Evidence(hair, f"common test rank {rank} {twin} ~")
                    if rank > 0 and borrowed_rank(str(concept.get("code", ""))) else NO_EVIDENCE)
        bonus = self.weight * max(0.0, 1 - math.log(rank) / math.log(self.scale)) if rank > 0 else 0
        if bonus <= 0:
            return NO_EVIDENCE
        if borrowed_rank(str(concept.get("code", ""))):
            return Evidence(bonus + hair, f"common test rank {rank} {twin} ~")
        # "~": a prior, not something the row said (codemap.domains.evidence's marks).
        return Evidence(bonus, f"common test rank {rank} ~")
