"""Laboratory tests and LOINC: the lab domain.

What it knows: LOINC's axes read from a code's names or a row's text (loinc), units and the
properties they measure (units), the words of properties, specimens and classes and the
evidence of a list's unit, specimen and category columns (columns), evidence read from the
row's text and usual-variant priors (text), a test that adds words to a plainer test the row
names (plainer), all of them assembled (scorers), how commonly a code is ordered (commonness),
abbreviations learned from LOINC's short and long names (abbreviations), tokens that run parts
of component words together, "TnT" (run_together), element symbols (element_symbols), German LOINC words read in English (part_translation), and a site's unit
system and methods learned from its approvals (conventions).
"""
from __future__ import annotations

import functools
from typing import Callable

from ...config import RankConfig
from ...readings.senses import domain_expander
from ...vocab.vocabulary import Vocabulary, builtin_loinc
from ..base import Domain
from .abbreviations import builtin_abbreviations, learn_abbreviations, with_expanded_short_names
from .columns import add_loinc_axes, property_from_name
from .commonness import code_rank, target_shares
from .conventions import learn as learn_conventions
from .element_symbols import symbol_reader
from .loinc import (component_from_name, is_loinc_code, reads_as_short_names, short_name_property,
                    with_short_name_axes)
from .part_translation import part_reader
from .run_together import run_together_reader
from .specimen_fields import target_fields
from .scorers import lab_scorers
from .units import parse_unit

LOINC_SHARE = 0.9  # of a target's codes, sampled, that must be LOINC codes for a LOINC table


def is_loinc_target(vocab: Vocabulary) -> bool:
    """The built-in or an imported LOINC, or a table of LOINC codes under any name: what gets
    LOINC's treatment (short names expanded, axes, element symbols read, the lab domain).
    A user's LOINC table is known by its codes, not by its file name."""
    if vocab.id.upper().startswith("LOINC"):
        return True
    codes = vocab.concepts["code"]
    sample = codes.sample(min(len(codes), 500), random_state=0) if len(codes) else codes
    loinc = sum(is_loinc_code(c) for c in sample)
    return bool(len(sample)) and loinc >= LOINC_SHARE * len(sample)


def named_by_short_names(vocab: Vocabulary) -> bool:
    """A LOINC table whose names are LOINC short names ("ALP SerPl-cCnc") with no long name
    beside them: none typed "short" (the built-in LOINC and an imported release type theirs),
    and the concepts' names read as short names (loinc.reads_as_short_names)."""
    return (not (vocab.names["name_type"] == "short").any()
            and reads_as_short_names(vocab.concepts["name"]))


@functools.lru_cache(maxsize=1)
def lab_sense_reader() -> Callable[[str], str]:
    """Abbreviation senses chosen by the built-in LOINC's long names (codemap.readings.senses):
    what a table named by short names alone reads its rows with."""
    return domain_expander(builtin_loinc(), builtin_abbreviations())


def prepare(vocab: Vocabulary) -> Vocabulary:
    """A LOINC target with its short names also expanded ("Chol SerPl-mCnc" → "… cholesterol
    serum or plasma …": short names match poorly as raw strings) and its concepts' axes
    (property, system, example units)."""
    if named_by_short_names(vocab):
        # No long name beside them: the expansions are a spelled-out row's only n-grams
        # ("Alkaline Phosphatase" vs "ALP SerPl-cCnc"), so they count lexically too
        # (benchmarks/results/lab-text/RULE-short-name-lexical.md), and they also carry the
        # lab senses a row's second reading gets ("IgG" → "IgG immunoglobulin G",
        # RULE-short-name-senses.md).
        vocab = with_expanded_short_names(vocab, every_name=True, lexical=True,
                                          then=lab_sense_reader())
    else:
        # A table that types no short names may hold them as its names ("Hgb Bld-mCnc"):
        # every name is then expanded (RULE-short-name-tables.md).
        typed = (vocab.names["name_type"] == "short").any()
        vocab = with_expanded_short_names(vocab, every_name=not typed)
    return vocab.with_concepts(_with_axes(vocab.concepts))


def _with_axes(concepts):
    """Concepts with LOINC's axes; a table named by LOINC short names ("Sodium Ur-sCnc") gets
    the axes its long names would give (loinc.with_short_name_axes), not its names read as
    long names."""
    if "property" in concepts.columns:
        return concepts
    if "short_name" not in concepts.columns and reads_as_short_names(concepts["name"]):
        concepts = with_short_name_axes(concepts)
    concepts = add_loinc_axes(concepts)
    if "short_name" in concepts.columns:  # the property a long name brackets not, its short name writes
        unread = concepts["property"].fillna("") == ""
        concepts.loc[unread, "property"] = concepts.loc[unread, "short_name"].fillna("").astype(str).map(
            short_name_property)
    return concepts


def scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    return lab_scorers(usage=rank.usage_evidence, off=rank.evidence_off, si=rank.unit_system == "si",
                       methodless=rank.methods == "none",
                       shares=target_shares(vocab.concepts), usage_share=rank.usage_share,
                       open_rows_only=rank.usage_open_rows_only and bool(rank.crosslingual_from),
                       fields=target_fields(vocab.concepts))


def readings(vocab: Vocabulary, rank: RankConfig) -> list:
    """A token that runs parts of words together ("TnT"): the component words they spell; a list
    in another language: the English words of its LOINC parts."""
    return [run_together_reader(vocab), *([part_reader(rank.crosslingual_from)] if rank.reads_parts else [])]


def short_forms(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Long word(s) → short form, learned from (short name, long name) pairs ("Hgb Bld-mCnc" /
    "Hemoglobin [Mass/volume] in Blood" → "hemoglobin": "hgb")."""
    return {a.expansion.lower(): a.short for a in learn_abbreviations(pairs)}


def conventions(vocab: Vocabulary, approved: list[tuple[str, str]]) -> tuple[dict, str]:
    """A site's unit system and methods, from its approvals onto a LOINC target."""
    learned = learn_conventions(approved, vocab.concepts)
    return learned.settings(), learned.said


LAB = Domain(
    name="lab", claims=is_loinc_target, prepare=prepare, scorers=scorers,
    text_steps=lambda vocab: [symbol_reader(vocab)],
    sense_reader=lambda vocab: lab_sense_reader() if named_by_short_names(vocab) else None,
    readings=readings, senses=builtin_abbreviations, usage_rank=code_rank,
    evidence=tuple(s.name for s in lab_scorers()), short_forms=short_forms,
    unit_properties=lambda unit: parse_unit(unit).properties,
    name_property=property_from_name, name_analyte=component_from_name, conventions=conventions)
