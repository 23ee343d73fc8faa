"""Domain knowledge, one room per kind of target: `lab` (LOINC) and `drug` (RxNorm-style drug
concepts), with room for the next (procedures, conditions, measurement values).

A Domain says, through one small record, everything ranking needs from it:
- `claims(vocab)`: whether a target is of this kind — asked once per target, by
  `prepare_target`, and kept on the PreparedTarget (a LOINC table is known by its codes, not
  its file name, so the answer costs a sample of codes);
- `prepare(vocab)`: a new vocabulary with what the domain adds (extra names, concept axes);
- `scorers(vocab, rank)`: its evidence scorers (codemap.domains.evidence), as `rank` switches
  them on;
- `text_steps(vocab)`: steps that prepare a source text before it is read ("K+" → "K+
  potassium");
- `sense_reader(vocab)`: the abbreviation reading its targets need instead of the general one
  (a LOINC table of short names has no long words to choose senses by), or None;
- `readings(vocab, rank)`: further second readings of a prepared text (German LOINC words read
  in English);
- `senses()`: abbreviations it teaches every target's sense reading ("creat" → creatinine);
- `language_free_words(vocab)`: words of a list that tell nothing of its language;
- `usage_rank(code)`: how commonly a concept is used (1 = most), 0 when unknown;
- `evidence`: its scorers' names, which `RankConfig.evidence_off` can leave out;
- `short_forms(pairs)`: long words → the short form (short name, long name) pairs teach
  ("hemoglobin" → "hgb"), what a pseudo-query is abbreviated with;
- `unit_properties(unit)`: the properties a unit can measure ("mg/dL" → {"MCnc"});
- `name_property(name)` and `name_analyte(name)`: a concept name's property and analyte
  ("Glucose [Mass/volume] in Serum" → "MCnc", "Glucose"), "" when the domain cannot say.
- `carried_with(vocab)`: code → what a target carries or lacks together with it (a drug's
  ingredient set), or None: `codemap calibrate` hides a missing row's gold with it.
- `conventions(vocab, approved)`: the settings a site's approved (text, code) pairs settle (a
  lab's unit system and methods), `map --memory` ranking its next list with them.

Those last four serve later stages on any target, whichever domain claims it (two sites'
units for a SNOMED concept are still compared): `short_forms`, `unit_properties`, `name_property`
and `name_analyte` below ask every domain.

General ranking (codemap.rank) and every stage after it ask the registry, never a domain by
name (tests/test_layout.py holds them to it). Adding an evidence scorer to a domain is one file
(the scorer) and one line (its domain's `scorers`); docs/architecture.md shows it.
"""
from __future__ import annotations

from ..vocab.vocabulary import Vocabulary
from .base import OTHER, Domain, PreparedTarget
from .drug import DRUG
from .lab import LAB

# The domains, in the order they are asked (a drug target first: its codes are numbers that no
# LOINC check digit fits anyway).
REGISTRY: tuple[Domain, ...] = (DRUG, LAB)

__all__ = ["Domain", "OTHER", "PreparedTarget", "REGISTRY", "all_senses", "domain_of",
           "evidence_by_domain", "evidence_names", "name_analyte", "name_property",
           "prepare_target", "short_forms", "unit_properties"]


def evidence_names() -> tuple[str, ...]:
    """Every domain's evidence scorer names: all that `RankConfig.evidence_off` can name."""
    return tuple(name for domain in REGISTRY for name in domain.evidence)


def evidence_by_domain() -> dict[str, tuple[str, ...]]:
    """Domain name → its evidence scorer names ("drug" → the drug scorers): what `codemap
    eval` switches on together for a target of that domain."""
    return {domain.name: domain.evidence for domain in REGISTRY}


def domain_of(vocab: Vocabulary) -> Domain:
    """The first domain that claims `vocab`, else OTHER."""
    return next((d for d in REGISTRY if d.claims(vocab)), OTHER)


def prepare_target(vocab: Vocabulary) -> PreparedTarget:
    """Ask which domain `vocab` is of (once) and let it prepare it."""
    domain = domain_of(vocab)
    return PreparedTarget(domain.prepare(vocab), domain)


def all_senses() -> dict[str, str]:
    """Every domain's taught abbreviations (lower-cased short form → expansion)."""
    found: dict[str, str] = {}
    for domain in REGISTRY:
        found.update(domain.senses())
    return found


def short_forms(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Long word(s) → short form, as every domain learns them from these (short name, long name)
    pairs of one vocabulary ("hemoglobin" → "hgb"); empty when none learns any."""
    found: dict[str, str] = {}
    for domain in REGISTRY:
        found.update(domain.short_forms(pairs))
    return found


def unit_properties(unit: str) -> frozenset[str]:
    """The properties a unit can measure, as the domains that read units say ("mg/dL" →
    {"MCnc"}); empty when it is blank or none understands it."""
    return frozenset().union(*(domain.unit_properties(unit) for domain in REGISTRY))


def name_property(name: str) -> str:
    """A concept name's property ("Glucose [Mass/volume] in Serum" → "MCnc"): the first domain's
    that can say, else ""."""
    return next((found for domain in REGISTRY if (found := domain.name_property(name))), "")


def name_analyte(name: str) -> str:
    """What a concept name measures or names ("Glucose [Mass/volume] in Serum" → "Glucose"):
    the first domain's that can say, else ""."""
    return next((found for domain in REGISTRY if (found := domain.name_analyte(name))), "")
