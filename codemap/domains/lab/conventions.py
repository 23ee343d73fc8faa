"""A site's lab conventions, learned from the mappings its reviewers approved.

Two codes of one test often differ only by an axis a row's text leaves open, and sites settle it
their own way: a Dutch ICU's lab reports in moles where a US one reports mass ("Kreatinine" →
14682-9, not 2160-0), and one site records the method-less code where another records the
commonest method's ("Platelets [#/volume] in Blood", not "… by Automated count"). Nothing in a
row says which; the site's approved mappings do. Each approval whose code has such a twin in
the target is a vote, and the majority of at least `LEAST` votes becomes the list's
`--unit-system` or `--methods` (codemap.config.RankConfig), unless the user gave them.

Votes on the unit system: an approved code whose property is mass or moles (MCnc/SCnc, MRat/
SRat…) with a twin of the other kind in the target, same component, system, timing and method.
Votes on methods: where the target holds a test's method-less code and LOINC's counts rank a
method's code above it, an approval of either for a text that states no method ("Thrombocyten",
not "Platelets auto"). Where the counts rank the method-less code first, both conventions agree
and the approval says nothing.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from .commonness import code_rank
from .loinc import Axes, concept_axes, is_loinc_code, text_axes

# Votes needed before a convention is taken; fewer leave the shipped default. A simple majority
# of at least five, not fitted: a site with a handful of such approvals has not shown a habit.
LEAST = 5
UNRANKED = 10**9


@dataclass(frozen=True)
class Conventions:
    """What the votes settled ("" = too few votes or no majority) and what the run sheet says."""

    unit_system: str = ""  # "si" or "us"
    methods: str = ""  # "none" or "usual"
    said: str = "none"

    def settings(self) -> dict[str, str]:
        """The RankConfig fields the votes settled."""
        return {k: v for k, v in (("unit_system", self.unit_system), ("methods", self.methods)) if v}


def learn(approved: Iterable[tuple[str, str]], concepts: pd.DataFrame,
          least: int = LEAST) -> Conventions:
    """The conventions of approved (source text, code) pairs onto a LOINC target's `concepts`."""
    twins = _Twins.of(concepts)
    units: list[bool] = []  # True: moles
    methodless: list[bool] = []
    for text, code in approved:
        axes = twins.axes.get(str(code))
        if axes is None:
            continue
        kind = twins.unit_kind(axes)
        if kind:
            units.append(kind == "S")
        usual = twins.usual_method(axes)
        if usual and not text_axes(str(text)).methods and _method(axes) in ("", usual):
            methodless.append(not _method(axes))
    unit_system = _majority(units, least, "si", "us")
    methods = _majority(methodless, least, "none", "usual")
    said = "; ".join(part for part in (
        _said("unit system", unit_system, units, "in moles"),
        _said("methods", methods, methodless, "method-less")) if part)
    return Conventions(unit_system, methods, said or "none")


@dataclass(frozen=True)
class _Twins:
    axes: dict  # code → Axes, LOINC codes of the target
    units: dict  # (component, system, timing, method, property less its first letter) → letters
    methods: dict  # (component, system, property, timing) → {method ("" = none): best rank}

    @staticmethod
    def of(concepts: pd.DataFrame) -> "_Twins":
        axes, units, methods = {}, defaultdict(set), defaultdict(dict)
        for row in concepts.drop_duplicates("code").to_dict("records"):
            if not is_loinc_code(str(row.get("code", ""))):
                continue
            found = concept_axes(row)
            if not found.component:
                continue
            axes[str(row["code"])] = found
            prop = _property(found)
            if prop[:1] in ("M", "S"):
                units[_unit_key(found, prop)].add(prop[0])
            ranks = methods[_method_key(found, prop)]
            rank = code_rank(str(row["code"])) or UNRANKED
            ranks[_method(found)] = min(rank, ranks.get(_method(found), UNRANKED))
        return _Twins(axes, dict(units), dict(methods))

    def unit_kind(self, axes: Axes) -> str:
        """"M" or "S" where the target holds the code's mass/moles twin, else ""."""
        prop = _property(axes)
        return prop[0] if prop[:1] in ("M", "S") and len(self.units.get(_unit_key(axes, prop), ())) > 1 else ""

    def usual_method(self, axes: Axes) -> str:
        """The method of the commonest of the code's method twins, where the target also holds
        their method-less twin and LOINC's counts rank a method above it (the two conventions
        then differ); else ""."""
        ranks = self.methods.get(_method_key(axes, _property(axes)), {})
        if "" not in ranks or len(ranks) < 2:
            return ""
        usual = min(ranks, key=lambda method: (ranks[method], method))
        return usual if ranks[usual] < UNRANKED else ""


def _property(axes: Axes) -> str:
    return sorted(axes.properties)[0] if axes.properties else ""


def _method(axes: Axes) -> str:
    """The code's method, "" for none (a method-less code's axes hold {""})."""
    return max(axes.methods, default="")


def _unit_key(axes: Axes, prop: str) -> tuple:
    return (axes.component.lower(), axes.system.lower(), axes.timing, _method(axes), prop[1:])


def _method_key(axes: Axes, prop: str) -> tuple:
    return (axes.component.lower(), axes.system.lower(), prop, axes.timing)


def _majority(votes: list[bool], least: int, yes: str, no: str) -> str:
    if len(votes) < least:
        return ""
    share = sum(votes) / len(votes)
    return yes if share > 0.5 else no if share < 0.5 else ""


def _said(axis: str, value: str, votes: list[bool], what: str) -> str:
    if not votes:
        return ""
    counted = f"{sum(votes)} of {len(votes)} approved codes with a twin {what}"
    return f"{axis} {value} ({counted})" if value else f"{axis} left as shipped ({counted})"
