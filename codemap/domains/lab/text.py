"""Lab evidence read from the row's TEXT, and usual-variant priors for what the text leaves out.

Same interface as the scorers of codemap.labs (`name`, `score`, `for_row`), one scorer per signal
so a learned ranker can weigh each on its own:

- specimen (the row's specimen column), text_specimen, text_property, text_timing, text_method,
  text_scale:
  what the row states read as LOINC axes (codemap.domains.lab.loinc) against the candidate's
  axes; agreement is a bonus, a contradiction a malus, with the reason ("specimen urine, from
  'Urinary'; candidate is Serum or Plasma ✘"). A fact the row also gives in a column (a specimen
  or unit the column scorers understand) is left to those scorers, so it is not counted twice.
  A stated axis binds (BINDING): a candidate that contradicts it ranks below every candidate
  that does not (an evidence tier), whatever its name score, and the confidence model reads the
  contradiction (issue #52: "urinary potassium" had the serum code first at confidence 0.94).
- usual_specimen, usual_method: when the row states no specimen / no method, prefer the
  candidate whose system / method carries the larger share of its component's ordering
  (codemap.domains.lab.commonness, learned from the LOINC common-test ranks).

Every scorer speaks only about LOINC codes (by their check digit), so a non-LOINC target ranks
as before. Default adjustments are a priori: the size of the column scorers' for the same fact
(specimen 0.03 / -0.08), smaller where the text is a weaker witness (property and method words
are ambiguous: "count" may name a percentage panel), and at most 0.03 for the priors.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..evidence import NO_EVIDENCE, Evidence
from ...read.normalize import spelled_from
from .columns import contradiction_tier
from .commonness import Shares, usage_shares
from .loinc import (Axes, all_variant_words, analyte_subparts, component_from_name,
                    component_parts, concept_axes, fold, is_loinc_code, long_name_system,
                    own_subparts, property_scales, system_specimen_of, text_axes, text_specimen,
                    variant_words, whole_analyte)
from .specimen_fields import TargetFields, concept_field, named_field
from .specimens import Specimen
from .units import parse_unit

_is_loinc = functools.lru_cache(maxsize=1 << 16)(is_loinc_code)


def _loinc_axes(concept: Mapping[str, object]) -> Axes | None:
    """The candidate's axes, None for a code that is not a LOINC code."""
    return concept_axes(concept) if _is_loinc(str(concept.get("code", ""))) else None


def _row_axes(row: Mapping[str, str]) -> Axes:
    return text_axes(str(row.get("text", "") or ""))


def stated_axes(row: Mapping[str, str]) -> tuple[bool, bool, bool, bool]:
    """Whether the row states its specimen, property, timing and method (AXES' order), in its
    text or in a column the lab domain reads."""
    said = _row_axes(row)
    return (bool(said.group) or _column_specimen(row), bool(said.properties) or _column_unit(row),
            bool(said.timing), bool(said.methods))


def states_an_axis(row: Mapping[str, str]) -> bool:
    return any(stated_axes(row))


def column_specimen(row: Mapping[str, str]) -> Specimen:
    """The specimen the row's specimen column states ("Arterial blood", "Urin", "CSF")."""
    return text_specimen(fold(str(row.get("specimen", "") or "")))


def _column_specimen(row: Mapping[str, str]) -> bool:
    return bool(column_specimen(row))


def _column_unit(row: Mapping[str, str]) -> bool:
    return bool(parse_unit(row.get("unit", "") or "").properties)


class _BoundScorer:
    """`score` through `for_row`, so both ways share one code path (as codemap.labs scorers)."""

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        bound = self.for_row(row)
        return NO_EVIDENCE if bound is None else bound(concept)


def _first(values) -> str:
    return next(iter(values), "")


@dataclass(frozen=True)
class _Axis:
    """How one axis is compared: what the text said (Axes.said key, Axes field) and how the
    candidate's value is read and shown."""

    said: str  # key of Axes.said
    text: Callable[[Axes], object]  # the text's value(s); falsy when the text says nothing
    candidate: Callable[[Axes], str]  # the candidate's value; "" when unknown (no opinion)
    agrees: Callable[[object, str], bool]
    shown: Callable[[Axes], str]  # the candidate's value as the reason names it
    column: Callable[[Mapping[str, str]], bool] = lambda row: False  # a column scorer reads it


# specimen: ", SERUM" vs the system; property: "(%)", "Count", "Ratio", "level" vs PROPERTY;
# timing: "24 hr" vs 24H/Pt; method: "Automated count", "dipstick" vs the method. A method-less
# candidate is no contradiction of a method: LOINC leaves the method out of the everyday code.
AXES = {
    "text_specimen": _Axis("system", lambda t: Specimen(t.group, t.qualifier, part=t.part),
                           lambda a: Specimen(a.group, a.qualifier, part=a.part),
                           lambda t, v: not t.contradicted_by(v), lambda a: a.system,
                           _column_specimen),
    "text_property": _Axis("property", lambda t: t.properties, lambda a: _first(a.properties),
                           lambda t, v: v in t, lambda a: _first(a.properties), _column_unit),
    # A challenge code is timed by its challenge ("--2 hours post 100 g glucose"), whatever its
    # TIME_ASPCT (Pt): the hours a row states are compared with those.
    "text_timing": _Axis("timing", lambda t: t.timing, lambda a: a.challenge_hours or a.timing,
                         lambda t, v: t == v,
                         lambda a: f"{a.challenge_hours} post" if a.challenge_hours else a.timing),
    "text_method": _Axis("method", lambda t: t.methods, lambda a: _first(a.methods),
                         lambda t, v: v in t, lambda a: f"by {_first(a.methods)}"),
    # A scale the text states ("Qn") against the one the candidate's property has: a presence
    # or interpretation code is no quantitative result, whatever unit the row carries.
    "text_scale": _Axis("scale", lambda t: t.scale,
                        lambda a: property_scales().get(_first(a.properties), ""),
                        lambda t, v: t == v,
                        lambda a: f"{_first(a.properties)} ({property_scales()[_first(a.properties)]})"),
}


@dataclass(frozen=True)
class TextAxisScorer(_BoundScorer):
    """One axis the row's text names against the candidate's (`name` picks it from AXES)."""

    name: str = "text_specimen"
    match: float = 0.03
    mismatch: float = -0.08

    def for_row(self, row: Mapping[str, str]):
        axis = AXES[self.name]
        if axis.column(row):  # the column scorer already reads this fact: not counted twice
            return None
        said = _row_axes(row)
        return functools.partial(self._score, axis, said) if axis.text(said) else None

    def _score(self, axis: _Axis, said: Axes, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        value = axis.candidate(axes) if axes is not None else ""
        if not value:
            return NO_EVIDENCE
        stated = axis.text(said)
        told = stated.shown() if isinstance(stated, Specimen) else said.said[axis.said]
        if axis.agrees(stated, value):
            return Evidence(self.match, f"text says {told}, from '{said.said[axis.said]}'; "
                                        f"candidate is {axis.shown(axes)} ✔")
        return Evidence(self.mismatch, f"text says {told}, from '{said.said[axis.said]}'; "
                                       f"candidate is {axis.shown(axes)} ✘", contradicts=True,
                        tier=contradiction_tier(self.name))


@dataclass(frozen=True)
class SpecimenScorer(_BoundScorer):
    """The row's specimen column (read as the text is: "Arterial blood", "Urin", "LCR") against
    the candidate's system; a contradiction binds like the text's (BINDING)."""

    match: float = 0.03
    mismatch: float = -0.08
    name: str = "specimen"

    def for_row(self, row: Mapping[str, str]):
        stated = column_specimen(row)
        return functools.partial(self._score, stated, row["specimen"]) if stated else None

    def _score(self, stated: Specimen, column: str, concept: Mapping[str, object]) -> Evidence:
        system = str(concept.get("system", "") or "")
        found = system_specimen_of(system) if system else Specimen()
        if not found:
            return NO_EVIDENCE
        if not stated.contradicted_by(found):
            return Evidence(self.match, f"specimen {column} fits {system} ✔")
        return Evidence(self.mismatch, f"specimen {column} ≠ {system} ✘", contradicts=True,
                        tier=contradiction_tier(self.name))


@dataclass(frozen=True)
class SpecimenFieldScorer(_BoundScorer):
    """A row that names its test's specimen field ("HPV Source") against the candidate: the
    field it names, of unspecified specimen, agrees; a result, the field of one specimen only or
    another field contradicts it, and the contradiction binds (BINDING). The target's field
    codes join the row's candidates (codemap.domains.lab.specimen_fields)."""

    match: float = 0.03
    mismatch: float = -0.08
    name: str = "text_field"
    fields: TargetFields = field(default=TargetFields(), compare=False, hash=False)  # the target's

    def for_row(self, row: Mapping[str, str]):
        said, head = named_field(str(row.get("text", "") or ""))
        return functools.partial(self._score, said, head) if said else None

    def candidates(self, row: Mapping[str, str]) -> frozenset:
        return self.fields.codes if named_field(str(row.get("text", "") or ""))[0] else frozenset()

    def _score(self, said: str, head: str, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.component:
            return NO_EVIDENCE
        told = f"text names its test's specimen field, from '{said}'"
        found = concept_field(axes.component, axes.system, str(concept.get("code", "")), head,
                              self.fields)
        if found == "field":
            return Evidence(self.match, f"{told}; candidate is that field of any specimen ✔")
        return Evidence(self.mismatch, f"{told}; candidate is a {found} ✘", contradicts=True,
                        tier=contradiction_tier(self.name))


@dataclass(frozen=True)
class UsualSpecimenScorer(_BoundScorer):
    """The component's usually ordered specimen. A row that states no specimen (column or text):
    prefer each candidate in proportion to its system's share of the component's ranked
    ordering. A row that states one: lower a candidate whose system fits the statement but is
    less usual than the component's commonest fitting system, by the difference of the shares.
    "Blood" states the blood group and leaves Serum or Plasma and Blood open; only variants of
    one component are compared, so a component ordered in one system alone is not preferred
    over another (benchmarks/results/specimen-column/RULE-3.md, RULE-4.md)."""

    weight: float = 0.03
    name: str = "usual_specimen"
    # The target's shares (commonness.target_shares: components as it names them); None: the
    # shipped long names' (usage_shares), looked up when first used, not on import
    shares: Shares | None = field(default=None, compare=False, hash=False)

    def for_row(self, row: Mapping[str, str]):
        # The column where the row has one, as the specimen scorers read it (text_specimen
        # leaves a specimen the column states to the column's scorer).
        stated = column_specimen(row) or AXES["text_specimen"].text(_row_axes(row))
        return functools.partial(self._less_usual, stated) if stated else self._score

    def _score(self, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        system = long_name_system(concept) if axes is not None else ""
        shares = self.shares or usage_shares()
        share = shares.usual_systems(axes.component).get(system, 0.0) if system else 0.0
        if share <= 0:
            return NO_EVIDENCE
        return Evidence(self.weight * share, f"no specimen stated; {system} is "
                                             f"{share:.0%} of {axes.component} orders ~")

    def _less_usual(self, stated: Specimen, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        system = long_name_system(concept) if axes is not None else ""
        if not system or stated.contradicted_by(system_specimen_of(system)):
            return NO_EVIDENCE  # a contradiction is the specimen scorers' to bind
        usual = (self.shares or usage_shares()).usual_systems(axes.component)
        fitting = {s: v for s, v in usual.items() if not stated.contradicted_by(system_specimen_of(s))}
        if not fitting:
            return NO_EVIDENCE
        commonest = max(fitting, key=lambda s: (fitting[s], s))
        share = fitting.get(system, 0.0)
        if share >= fitting[commonest]:  # the commonest fitting system, or one as common
            return NO_EVIDENCE
        return Evidence(self.weight * (share - fitting[commonest]),
                        f"{stated.shown()} stated; {system} is {share:.0%} of {axes.component} orders, "
                        f"{commonest} {fitting[commonest]:.0%} ~")


@dataclass(frozen=True)
class UsualMethodScorer(_BoundScorer):
    """No method stated in the text: prefer the component's usual method (mostly none), in
    proportion to its share of the component's ranked ordering (overall share for a component
    the lists do not rank)."""

    weight: float = 0.03
    name: str = "usual_method"
    shares: Shares | None = field(default=None, compare=False, hash=False)  # as UsualSpecimenScorer
    methodless: bool = False  # the list's codes carry no method where a row states none (--methods)

    def for_row(self, row: Mapping[str, str]):
        return None if _row_axes(row).methods else self._score

    def _score(self, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None:
            return NO_EVIDENCE
        method = next(iter(axes.methods), "")
        if self.methodless:
            return (Evidence(self.weight, "no method stated; the list's codes carry none "
                                          "(--methods none) ~") if not method else NO_EVIDENCE)
        share = (self.shares or usage_shares()).usual_methods(axes.component).get(method, 0.0)
        if share <= 0:
            return NO_EVIDENCE
        said = f"by {method}" if method else "no method"
        return Evidence(self.weight * share, f"no method stated; {said} is {share:.0%} of "
                                             f"{axes.component or 'ranked'} orders ~")


@dataclass(frozen=True)
class ComponentBackoff(_BoundScorer):
    """LOINC variants of one component that the row cannot tell apart share their best name score.

    A component's codes differ in their names only by the axis words (property, system, timing,
    method). When the row states none of an axis, the encoder's preference along it is noise (and
    a trained model, which learns to push siblings apart, makes that noise larger than the
    evidence); the usual-variant priors, the common-test rank and the unit column should decide.
    Candidates are grouped by component (with its challenge, "--1 hour post meal", which is part
    of a LOINC component) plus each axis the row does state (text or column). A stated specimen
    keeps every system apart, not only specimen groups: a row that names one says which
    ("Bld" is not "SerPl", though both are blood). Adds no evidence itself. (Grouping by analyte,
    "Bilirubin" of "Bilirubin.direct" and ".total", unless the row writes the subpart, lost six
    rows over the lab dev sets and was not adopted: benchmarks/results/stated-axes/RULE.md.
    The total of an analyte is the analyte itself, "Bilirubin.total" with urine's "Bilirubin"
    (loinc.whole_analyte: benchmarks/results/whole-analyte/RULE.md).)

    Its `family` is the analyte (loinc.component_parts): ranking adds every code of a row's
    best-matching analytes to its candidates (issue #52), so the commonest test of the analyte
    is there to be chosen whatever its name looks like.
    """

    name: str = "component_backoff"

    def for_row(self, row: Mapping[str, str]):
        return None

    def sibling_key(self, row: Mapping[str, str]):
        return functools.partial(self._key, stated_axes(row))

    @staticmethod
    def _key(stated: tuple, concept: Mapping[str, object]) -> tuple | None:
        axes = _loinc_axes(concept)
        if axes is None or not axes.component:
            return None
        challenge = str(concept.get("name", "") or "").partition(" --")[2].lower()
        values = (axes.system.lower(), _first(axes.properties), axes.timing, _first(axes.methods))
        return (whole_analyte(axes.component), challenge,
                *(v if s else None for v, s in zip(values, stated)))

    def family(self, concept: Mapping[str, object]) -> str | None:
        """The candidate's analyte (None for a code that is not LOINC's)."""
        axes = _loinc_axes(concept)
        return component_parts(axes.component)[0] if axes is not None and axes.component else None


@dataclass(frozen=True)
class SubpartScorer(_BoundScorer):
    """The subpart of its analyte a row writes ("ionized" of "Calcium, ionized") against the
    candidate's own subpart (loinc.own_subparts: "Calcium.ionized"): a component axis the row
    states, binding like the other text axes. Which words are an analyte's subparts is learned
    from the built-in names (loinc.analyte_subparts); a row that writes none of its candidate's
    analyte's says nothing of it (benchmarks/results/stated-subpart/RULE.md, RULE-2.md)."""

    name: str = "text_subpart"
    match: float = 0.03
    mismatch: float = -0.05

    def for_row(self, row: Mapping[str, str]):
        """None for a row with no word that could state a subpart (most rows), so its
        candidates are not looked at."""
        words = tuple(fold(str(row.get("text", "") or "")).split())
        may = _subpart_words()
        if not any(w in may or w[:-1] in may or (len(w) == 1 and w.isalpha()) for w in words):
            return None
        return functools.partial(self._score, words)

    def _score(self, words: tuple, concept: Mapping[str, object]) -> Evidence:
        axes = _loinc_axes(concept)
        if axes is None or not axes.component:
            return NO_EVIDENCE
        analyte = fold(component_parts(axes.component)[0]).strip()
        stated = sorted(_stated_subparts(words, analyte, analyte_subparts().get(analyte, frozenset())))
        if not stated:
            return NO_EVIDENCE
        said = ", ".join(stated)
        if set(stated) <= own_subparts(axes.component):
            return Evidence(self.match, f"text says {said}; candidate is {axes.component} ✔")
        return Evidence(self.mismatch, f"text says {said}; candidate is {axes.component} ✘",
                        contradicts=True, tier=contradiction_tier(self.name))


@functools.lru_cache(maxsize=1)
def _subpart_words() -> frozenset:
    """Every analyte's subparts, together: a row that writes none of them (whole) and no
    initial states no subpart."""
    return frozenset().union(*analyte_subparts().values())


def _stated_subparts(words: tuple, analyte: str, known: frozenset) -> set[str]:
    """The subparts of `analyte` (`known`) the row's folded `words` write: whole or plural, or
    by the initial right before a word naming the analyte ("T Bil"; an initial that fits two
    subparts states neither)."""
    if not known:
        return set()
    head = analyte.split()[0]
    stated = set()
    for at, word in enumerate(words):
        whole = {s for s in known if word in (s, f"{s}s")}
        if whole:
            stated |= whole
            continue
        # A cut ("tot") is not read: cuts are words of their own too often ("gas" of
        # gastrointestinal, a subpart of hemoglobin, in "Hemoglobin (blood gas)").
        if len(word) == 1 and word.isalpha() and _names(words[at + 1:at + 2], head):
            fits = {s for s in known if s.startswith(word)}
            if len(fits) == 1:
                stated |= fits
    return stated


def _names(following: tuple, head: str) -> bool:
    """Whether the word after an initial names the analyte: its first word, or a cut of it."""
    if not following:
        return False
    word = following[0]
    return word == head or (len(word) >= 3 and head.startswith(word))


@dataclass(frozen=True)
class VariantScorer(_BoundScorer):
    """A word the row writes that tells a test from its siblings ("IgG" of "Rubella IgG": LOINC
    also has the IgM test): a candidate that writes a sibling's word in that place instead
    contradicts the row, binding like the other text axes. Which words tell siblings apart is
    learned from the built-in components (loinc.variant_words); the encoder scores "IgG" and
    "IgM" alike (benchmarks/results/variant-words/RULE-2.md)."""

    name: str = "text_variant"
    mismatch: float = -0.05

    def for_row(self, row: Mapping[str, str]):
        """None for a row that writes no variant word, nor a word that spells one out."""
        said = _RowWords.of(str(row.get("text", "") or ""))
        if not said.words_set & all_variant_words() and not said.spelled:
            return None
        return functools.partial(self._score, said)

    def _score(self, said: "_RowWords", concept: Mapping[str, object]) -> Evidence:
        if not _is_loinc(str(concept.get("code", ""))):
            return NO_EVIDENCE
        # The long name's component: a LOINC table's COMPONENT column orders the words
        # otherwise ("Rubella virus Ab.IgG"), and the places are learned from long names.
        name = str(concept.get("long_name") or concept.get("name") or "")
        places, words = _name_variants(name)
        if words.isdisjoint(said.any_words):  # most candidates: the row writes none of them
            return NO_EVIDENCE
        stated = [(told, own) for own, others, beside in places
                  if not said.written(own, beside)
                  and (told := sorted({said.written(w, beside) for w in others} - {""}))]
        if not stated:
            # No agreement bonus: only a candidate with siblings could earn one, and a one-word
            # test ("Thyroglobulin") lost to a family writing the row's word (RULE.md).
            return NO_EVIDENCE
        told = "; ".join(f"text says {', '.join(w)}; candidate is {own}" for w, own in stated)
        return Evidence(self.mismatch, f"{told} ✘", contradicts=True,
                        tier=contradiction_tier(self.name))


@functools.lru_cache(maxsize=1 << 14)
def _name_variants(name: str) -> tuple[tuple, frozenset]:
    """loinc.variant_words of a long name's component (its challenge cut off), and every word
    of its places together."""
    places = variant_words(component_from_name(name.split(" --")[0]))
    return places, frozenset(w for own, others, _ in places for w in (own, *others))


@functools.lru_cache(maxsize=1)
def _short_variant_words() -> dict[str, tuple[str, ...]]:
    """The variant words a row may spell out (_RowWords), abbreviations of two or three
    letters, by their first letter."""
    by_letter: dict[str, list] = {}
    for word in sorted(w for w in all_variant_words() if 2 <= len(w) <= 3 and w.isalpha()):
        by_letter.setdefault(word[0], []).append(word)
    return {letter: tuple(found) for letter, found in by_letter.items()}


@dataclass(frozen=True)
class _RowWords:
    """A row's folded words, read once per row for every candidate: which variant words they
    write. A word of one or two characters ("i", "1") counts only right beside a word the
    component writes beside it ("Troponin I"), so that "C reactive protein" states no protein C.
    An abbreviation of two or three letters is also written by a row word that spells it out,
    as the abbreviation learner reads LOINC's short names ("antigen" writes "ag", "antibody"
    "ab"; variant-words/RULE-3.md)."""

    words: tuple
    words_set: frozenset
    spelled: Mapping[str, str]  # short variant word → the row word that spells it out
    any_words: frozenset  # the row's words and those it spells out

    @staticmethod
    def of(text: str) -> "_RowWords":
        words = tuple(fold(text).split())
        spelled = {}
        for word in words:
            for short in _short_variant_words().get(word[0], ()) if len(word) >= 5 else ():
                if short not in spelled and len(word) >= len(short) + 3 and spelled_from(short, word):
                    spelled[short] = word
        return _RowWords(words, frozenset(words), spelled, frozenset(words) | spelled.keys())

    def written(self, word: str, beside: frozenset) -> str:
        """The row word that writes `word`, "" when none."""
        if len(word) > 2 and word in self.words_set:
            return word
        if len(word) <= 2 and word in self.words_set and any(
                w == word and ({self.words[at - 1] if at else "", *self.words[at + 1:at + 2]}
                               & beside) for at, w in enumerate(self.words)):
            return word
        return self.spelled.get(word, "")


def text_scorers() -> list:
    """The seven text-axis scorers: the size of the column scorers' adjustment for the same fact,
    smaller where the text is a weaker witness ("count" may name a percentage panel)."""
    return [TextAxisScorer("text_specimen", 0.03, -0.08), TextAxisScorer("text_property", 0.03, -0.05),
            TextAxisScorer("text_timing", 0.03, -0.08), TextAxisScorer("text_method", 0.03, -0.03),
            TextAxisScorer("text_scale", 0.03, -0.05), SubpartScorer(),
            VariantScorer()]


def usual_scorers(shares: Shares | None = None, methodless: bool = False) -> list:
    """The two usual-variant priors, over `shares` (a target's: commonness.target_shares;
    the shipped long names' by default)."""
    return [UsualSpecimenScorer(shares=shares), UsualMethodScorer(shares=shares, methodless=methodless)]
