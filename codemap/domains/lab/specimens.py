"""A specimen as a row states it and as a LOINC system names it, read the same way.

Both sides are read as a `Specimen`: a group (the kind of specimen: blood, urine, CSF, stool,
body fluid, and each other specimen the shipped LOINC names use, such as sweat or saliva) and a
qualifier within it ("arterial" blood, "venous" blood). The tables of spellings are built in
codemap.domains.lab.loinc from what LOINC itself writes (its systems, its short names' system
words, the German variant's systems) beside the hand table of local words in
columns.SPECIMEN_GROUPS; this module only matches words against them.

A row's word also matches a spelling of five letters or more that it bends or extends:
"urinary" and "urinaire" are "urine", "arteriell" is "arterial" (shared_start).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

LIQUID = "serum or plasma"  # Specimen.part of a row or system naming the liquid part of blood


@dataclass(frozen=True)
class Specimen:
    """What a row states, or a system names; "" where nothing is known."""

    group: str = ""
    qualifier: str = ""  # e.g. "arterial", within its group
    said: str = ""  # the row's words that stated it ("urinary", "arterial")
    # The liquid part of blood, where a row's word or a system names it (SpecimenTable.liquid:
    # "serum", "plasma", "SerPl"); a system of the blood group that names none is whole blood.
    part: str = ""

    def __bool__(self) -> bool:
        return bool(self.group)

    def shown(self) -> str:
        return f"{self.qualifier} {self.part or self.group}".strip()

    def contradicted_by(self, system: "Specimen") -> bool:
        """Whether a candidate's system contradicts this stated specimen: another group, or, when
        a qualifier is stated, a system without it, or, when serum or plasma is stated, whole
        blood ("Serum bicarbonate" is not 1959-6, bicarbonate in blood). A row's "blood" states
        no part: lists write it of serum tests too. A system of unknown group says nothing.
        benchmarks/results/stated-serum/RULE.md"""
        if not system.group:
            return False
        return (system.group != self.group
                or bool(self.qualifier) and self.qualifier != system.qualifier
                or bool(self.part) and self.part != system.part)


@dataclass(frozen=True)
class SpecimenTable:
    """Spellings in the order they are tried, each with the specimen it names ("blda" → arterial
    blood), and each qualifier word with its group ("arterial" → blood)."""

    spellings: tuple[tuple[str, Specimen], ...]
    qualifiers: dict  # folded word → its group
    # Words a row uses as they are, never bent into a spelling: analytes ("plasminogen").
    unbent: frozenset = frozenset()
    # The spellings that name the liquid part of blood ("serum", "plasma", "serpl").
    liquid: frozenset = frozenset()

    @functools.cached_property
    def as_written(self) -> frozenset:
        """Tokens read only as they are: the unbent words and every spelling (a token that is a
        spelling is that spelling, never bent into another)."""
        return self.unbent | {spelling for spelling, _ in self.spellings}


def shared_start(word: str, spelling: str) -> bool:
    """`word` is `spelling` bent or extended: equal, a plural, or starting with all of a spelling
    of five letters or more but its last letter (six letters or less: "urinary" of "urine") or
    last two ("arteriell" of "arterial")."""
    if word == spelling or word == f"{spelling}s":
        return True
    if len(spelling) < 5 or " " in spelling:
        return False
    keep = len(spelling) - (1 if len(spelling) <= 6 else 2)
    return len(word) >= keep and word[:keep] == spelling[:keep]


def read_specimen(words: str, table: SpecimenTable) -> Specimen:
    """The first specimen of `table` that the folded `words` (" urinary potassium ") state, with
    the qualifier they state in its group; a qualifier alone ("pO2 arterial") states its group."""
    tokens = words.split()
    # A token that is itself a spelling is that spelling, never bent into an earlier one
    # ("bldcoa" is arterial cord blood, not "bldcov"). benchmarks/results/misreadings/RULE.md
    bends = lambda token, spelling: (token == spelling if token in table.as_written
                                     else shared_start(token, spelling))
    named, said = Specimen(), ""
    for spelling, specimen in table.spellings:
        hit = (spelling if f" {spelling} " in words else "") if " " in spelling else next(
            (token for token in tokens if bends(token, spelling)), "")
        if hit:
            named, said = specimen, hit
            break
    part = named.part or (LIQUID if said in table.liquid else "")
    if named.qualifier:
        return Specimen(named.group, named.qualifier, said, part)
    qualifier = next(((word, token) for token in tokens for word, of in table.qualifiers.items()
                      if (not named.group or of == named.group) and bends(token, word)),
                     None)
    if qualifier is None:
        return Specimen(named.group, "", said, part)
    word, token = qualifier
    return Specimen(table.qualifiers[word], word, f"{token} {said}".strip(), part)


def system_specimen(system_words: str, table: SpecimenTable) -> Specimen:
    """A LOINC system's specimen ("arterial blood" → blood, arterial): its words matched exactly
    (a system is written in LOINC's own words, nothing to bend)."""
    group = next((found.group for spelling, found in table.spellings
                  if f" {spelling} " in system_words), "")
    qualifier = next((w for w, of in table.qualifiers.items()
                      if of == group and f" {w} " in system_words), "")
    liquid = any(f" {spelling} " in system_words for spelling in table.liquid)
    return Specimen(group, qualifier, part=LIQUID if liquid else "")
