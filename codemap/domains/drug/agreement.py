"""Drug evidence: structured agreement between a source drug string and candidate drug concepts.

For each (source row, concept) pair the parsed ingredients, strength, dose form and brand are
compared (`codemap.domains.drug.parse`) by four evidence scorers (`codemap.domains.evidence`), each returning a
score adjustment and an explanation a reviewer can read ("strength 0.25 MG/ML = source 0.5 mg/2 mL ✔").
They plug into the same hybrid ranking as the lab scorers (`codemap.rank.hybrid.rank_hybrid`).

Ordering rule (the granularity contract), through the evidence `tier` that ranking sorts by before
the score:
- the ingredient scorer gives tier 4 (every concept ingredient is in the source), 2 (some) or 0,
  the strength scorer -1 when the source states a strength the concept contradicts; so among
  concepts with the same ingredients a contradicting strength never outranks one that agrees or
  says nothing, and a contradicted full match still beats a partial one;
- a source without a strength (or form, or brand) gives a small penalty to concepts that state
  one, so the less specific concept (ingredient, clinical drug form) wins over a guessed strength.

Ingredients come from the concept names (RxNorm naming) and, through the bracketed brands of the
same vocabulary, a brand in the source implies its ingredients ("Claritin" → loratadine). Concepts
sharing a brand or ingredient word with the source are offered as extra candidates, since the
embedding and lexical indexes may miss them ("Lodosyn 5O MG" → every [Lodosyn] concept).
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ...read.normalize import WORDS
from .parse import (DrugParse, in_one_name, ingredient_key, parse_drug, strength_comparable,
                    strengths_agree)
from ..evidence import NO_EVIDENCE, Evidence

# Score adjustments, in cosine-similarity units (embedding scores of near misses differ by ~0.05).
WEIGHTS = {
    "ingredient_all": 0.30, "ingredient_some": 0.10, "ingredient_none": -0.20,
    "strength_agree": 0.20, "strength_contradict": -0.30, "strength_unstated": -0.05,
    "form_agree": 0.10, "form_contradict": -0.15, "form_unstated": -0.03,
    "brand_agree": 0.15, "brand_other": -0.10, "brand_unstated": -0.03, "brand_generic": -0.03,
}
# Tiers (sorted before the score): ingredient match level outweighs a strength contradiction.
TIER_INGREDIENT_ALL, TIER_INGREDIENT_SOME, TIER_STRENGTH_CONTRADICT = 4, 2, -1
TIER_FORM_CONTRADICT = -1  # 0 restores a form contradiction to a malus only (RULE.md)
_ORAL_SOLIDS = {"tablet", "capsule"}
# What a product is made as, said where a string names no form ("Amoxicillin 250mg/5ml susp" is a
# liquid): compared with every group of the concept's dose form ("Oral Suspension": oral, liquid).
_STATES = {"liquid", "powder"}
_MIN_PREFIX = 6  # "glycopyrrolate" ~ "glycopyrronium", "hydromorphone" ~ "hydromorphon"


@functools.lru_cache(maxsize=4096)
def _source_parse(text: str) -> DrugParse:
    # Every candidate of a row is scored by four scorers: parse the row's text once.
    return parse_drug(text)


def _word_in(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    if len(word) < _MIN_PREFIX:
        return False
    prefix = word[:_MIN_PREFIX]
    return any(len(w) >= _MIN_PREFIX and w[:_MIN_PREFIX] == prefix for w in words)


def _normalised(text: str) -> str:
    return " ".join(WORDS.findall(text.lower()))


class DrugMatcher:
    """Parsed drug concepts of one vocabulary, compared against parsed source strings."""

    def __init__(self, concepts: pd.DataFrame):
        """`concepts`: the vocabulary's concept table (`code`, `name`)."""
        self.parsed: dict[str, DrugParse] = {}
        self.keys: dict[str, tuple[tuple[str, ...], ...]] = {}  # as the concept writes them
        # Compared in one spelling, so "paracetamol" meets "Acetaminophen" either way round.
        self.spelled: dict[str, tuple[tuple[str, ...], ...]] = {}
        brand_ingredients: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        self._by_word: dict[str, set[str]] = defaultdict(set)
        for code, name in zip(concepts["code"], concepts["name"]):
            parse = parse_drug(name, concept=True)
            self.keys[code] = tuple(ingredient_key(i) for i in parse.ingredients)
            keys = tuple(in_one_name(key) for key in self.keys[code])
            self.parsed[code], self.spelled[code] = parse, keys
            brand_word = self._brand_word(parse.brand)
            if brand_word:
                brand_ingredients[brand_word].update(keys)
                self._by_word[brand_word].add(code)
            for key in keys:
                if key:
                    self._by_word[key[0]].add(code)
        self.brand_ingredients = dict(brand_ingredients)

    @staticmethod
    def _brand_word(brand: str) -> str:
        words = _normalised(brand).split()
        return words[0] if words and len(words[0]) >= 3 else ""

    def lexical_candidates(self, source: DrugParse) -> set[str]:
        """Concepts whose brand or first ingredient word is a word of the source: a small pool that
        embeddings may miss ("Lodosyn 5O MG" → every [Lodosyn] concept)."""
        found: set[str] = set()
        for word in _name_words(source):
            found |= self._by_word.get(word, set())
        return found

    # --- the four features, each an Evidence ------------------------------------------------------

    def ingredients(self, source: DrugParse, code: str) -> Evidence:
        keys = self.spelled.get(code)
        if not keys:
            return NO_EVIDENCE
        words = _name_words(source)
        implied = {w for word in words for key in self.brand_ingredients.get(word, ()) for w in key}
        known = words | implied
        found = [key for key in keys if key and all(_word_in(w, known) for w in key)]
        names = ", ".join(" ".join(k) for k in self.keys[code])
        if len(found) == len(keys):
            via = "" if all(all(_word_in(w, words) for w in k) for k in found) else " (via brand)"
            return Evidence(WEIGHTS["ingredient_all"], f"ingredients {names}{via} ✔",
                            tier=TIER_INGREDIENT_ALL)
        if found:
            return Evidence(WEIGHTS["ingredient_some"],
                            f"ingredients {len(found)}/{len(keys)} of {names} ~",
                            tier=TIER_INGREDIENT_SOME)
        return Evidence(WEIGHTS["ingredient_none"], f"ingredients {names} not in source ✘")

    def strength(self, source: DrugParse, code: str) -> Evidence:
        concept = self.parsed.get(code)
        if concept is None or not concept.strengths:
            return NO_EVIDENCE
        said = ", ".join(dict.fromkeys(s.text for s in source.strengths))
        stated = ", ".join(str(s) for s in concept.strengths)
        if not source.strengths:
            return Evidence(WEIGHTS["strength_unstated"], f"strength {stated}, source states none ~")
        unmatched = [c for c in concept.strengths
                     if not any(strengths_agree(s, c) for s in source.strengths)]
        if not unmatched:
            return Evidence(WEIGHTS["strength_agree"], f"strength {stated} = source {said} ✔")
        if any(strength_comparable(s, c) for c in unmatched for s in source.strengths):
            return Evidence(WEIGHTS["strength_contradict"], f"strength {stated} ≠ source {said} ✘",
                            contradicts=True, tier=TIER_STRENGTH_CONTRADICT)
        return Evidence(0.0, f"strength {stated} vs source {said}: not comparable ~")

    def form(self, source: DrugParse, code: str) -> Evidence:
        concept = self.parsed.get(code)
        offered = _product_forms(concept) if concept else set()
        if not offered:
            return NO_EVIDENCE
        wanted = _product_forms(source) or set(source.forms & _STATES)
        if not wanted:
            return Evidence(WEIGHTS["form_unstated"], f"form {concept.dose_form}, source states none ~")
        if wanted & (offered | concept.forms):
            return Evidence(WEIGHTS["form_agree"],
                            f"form {concept.dose_form} ~ source {'/'.join(sorted(wanted))} ✔")
        # A stated form binds as a stated strength does (issue #52; measured on the drug dev
        # strings: benchmarks/results/stated-axes/RULE.md).
        return Evidence(WEIGHTS["form_contradict"],
                        f"form {concept.dose_form} ≠ source {'/'.join(sorted(wanted))} ✘",
                        contradicts=True, tier=TIER_FORM_CONTRADICT)

    def brand(self, source: DrugParse, code: str) -> Evidence:
        concept = self.parsed.get(code)
        if concept is None:
            return NO_EVIDENCE
        words = set(source.words)
        source_brands = {w for w in words if w in self.brand_ingredients}
        if not concept.brand:
            if source_brands:
                return Evidence(WEIGHTS["brand_generic"], "generic, source names a brand ~")
            return NO_EVIDENCE
        brand_word = self._brand_word(concept.brand)
        if (brand_word and brand_word in words) or (
                _normalised(concept.brand) in _normalised(source.text)):
            return Evidence(WEIGHTS["brand_agree"], f"brand {concept.brand} ✔")
        if source_brands:
            return Evidence(WEIGHTS["brand_other"], f"brand {concept.brand} ≠ source brand ✘")
        return Evidence(WEIGHTS["brand_unstated"], f"brand {concept.brand}, source names none ~")


def _name_words(source: DrugParse) -> set[str]:
    """The source's name words as written and in one spelling (drugs.in_one_name)."""
    return set(source.words) | set(in_one_name(source.words))


def _product_forms(parse: DrugParse) -> set[str]:
    forms = set(parse.product_forms)
    if forms & _ORAL_SOLIDS:
        forms.add("oral")
    if "oral" in parse.forms:
        forms.add("oral")
    return forms


@dataclass(frozen=True)
class DrugScorer:
    """One drug feature (ingredients, strength, form or brand) as an evidence scorer.

    The ingredients scorer also offers extra candidates: concepts sharing a brand or ingredient
    word with the source (`candidates`, the hybrid ranking's candidate hook)."""

    matcher: DrugMatcher
    name: str  # "ingredients", "strength", "form" or "brand"

    def score(self, row: Mapping[str, str], concept: Mapping[str, object]) -> Evidence:
        return self.for_row(row)(concept)

    def for_row(self, row: Mapping[str, str]):
        """The row's text parsed once (cached) and this feature's check, for all its candidates."""
        check, parse = getattr(self.matcher, self.name), _source_parse(str(row.get("text", "")))
        return lambda concept: check(parse, concept["code"])

    def candidates(self, row: Mapping[str, str]) -> set[str]:
        if self.name != "ingredients":
            return set()
        return self.matcher.lexical_candidates(_source_parse(str(row.get("text", ""))))


DRUG_FEATURES = ("ingredients", "strength", "form", "brand")


def drug_scorers(concepts: pd.DataFrame, features=DRUG_FEATURES) -> list[DrugScorer]:
    """The drug evidence scorers for a vocabulary's concept table (`code`, `name`)."""
    matcher = DrugMatcher(concepts)
    return [DrugScorer(matcher, feature) for feature in features]


def ingredient_sets(concepts: pd.DataFrame) -> dict[str, frozenset]:
    """Code → the concept's ingredients in one spelling (empty concepts left out)."""
    spelled = DrugMatcher(concepts).spelled
    return {code: frozenset(keys) for code, keys in spelled.items() if any(keys)}


def is_drug_vocabulary(vocab) -> bool:
    """Whether most concepts are in the OMOP Drug domain (a `domain_id` column says so)."""
    if "domain_id" not in vocab.concepts.columns or vocab.concepts.empty:
        return False
    return (vocab.concepts["domain_id"].str.lower() == "drug").mean() >= 0.5
