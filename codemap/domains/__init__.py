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
- `evidence`: its scorers' names, which `RankConfig.evidence_off` can leave out.

General ranking (codemap.rank) asks the registry, never a domain by name. Adding an evidence
scorer to a domain is one file (the scorer) and one line (its domain's `scorers`);
docs/architecture.md shows it.
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
           "evidence_names", "prepare_target"]


def evidence_names() -> tuple[str, ...]:
    """Every domain's evidence scorer names: all that `RankConfig.evidence_off` can name."""
    return tuple(name for domain in REGISTRY for name in domain.evidence)


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
