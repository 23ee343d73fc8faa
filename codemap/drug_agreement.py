"""Structured agreement between a source drug string and candidate drug concepts.

For each (source, concept) pair the parsed ingredients, strengths, dose form and brand are compared
(`codemap.drugs`). The result is a score adjustment, a tier used to order candidates, and an
explanation a reviewer can read ("strength 0.25 MG/ML = source 0.5 mg/2 mL ✔").

Ordering rule (the granularity contract):
- candidates are ordered by (ingredient tier, strength not contradicted, score + adjustment), so
  among concepts with the same ingredients a contradicting strength never outranks one that
  agrees or says nothing;
- a source without a strength (or form, or brand) gives a small penalty to concepts that state
  one, so the less specific concept (ingredient, clinical drug form) wins over a guessed strength.

Ingredients come from the concept names (RxNorm naming) and, through the bracketed brands of the
same vocabulary, a brand in the source implies its ingredients ("Claritin" → loratadine).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import pandas as pd

from .drugs import DrugParse, ingredient_key, parse_drug, strength_comparable, strengths_agree

# Score adjustments, in cosine-similarity units (embedding scores of near misses differ by ~0.05).
WEIGHTS = {
    "ingredient_all": 0.30, "ingredient_some": 0.10, "ingredient_none": -0.20,
    "strength_agree": 0.20, "strength_contradict": -0.30, "strength_unstated": -0.05,
    "form_agree": 0.10, "form_contradict": -0.15, "form_unstated": -0.03,
    "brand_agree": 0.15, "brand_other": -0.10, "brand_unstated": -0.03, "brand_generic": -0.03,
}
_ORAL_SOLIDS = {"tablet", "capsule"}
_MIN_PREFIX = 6  # "glycopyrrolate" ~ "glycopyrronium", "hydromorphone" ~ "hydromorphon"


@dataclass(frozen=True)
class Agreement:
    """How one concept agrees with one source string."""

    adjustment: float
    ingredient_tier: int  # 2: every concept ingredient is in the source, 1: some, 0: none
    strength_ok: bool  # False when the source states a strength the concept contradicts
    explanation: str


def _word_in(word: str, words: set[str]) -> bool:
    if word in words:
        return True
    if len(word) < _MIN_PREFIX:
        return False
    prefix = word[:_MIN_PREFIX]
    return any(len(w) >= _MIN_PREFIX and w[:_MIN_PREFIX] == prefix for w in words)


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


class DrugMatcher:
    """Parsed drug concepts of one vocabulary, compared against parsed source strings."""

    def __init__(self, concepts: pd.DataFrame):
        """`concepts`: the vocabulary's concept table (`code`, `name`)."""
        self.parsed: dict[str, DrugParse] = {}
        self.keys: dict[str, tuple[tuple[str, ...], ...]] = {}
        brand_ingredients: dict[str, set[tuple[str, ...]]] = defaultdict(set)
        self._by_word: dict[str, set[str]] = defaultdict(set)
        for code, name in zip(concepts["code"], concepts["name"]):
            parse = parse_drug(name, concept=True)
            keys = tuple(ingredient_key(i) for i in parse.ingredients)
            self.parsed[code], self.keys[code] = parse, keys
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
        for word in source.words:
            found |= self._by_word.get(word, set())
        return found

    def compare(self, source: DrugParse, code: str) -> Agreement:
        """Agreement of concept `code` with the parsed source; see the module docstring."""
        concept = self.parsed.get(code)
        if concept is None:
            return Agreement(0.0, 0, True, "")
        notes: list[str] = []
        adjustment = 0.0
        tier, delta = self._ingredients(source, concept, self.keys[code], notes)
        adjustment += delta
        ok, delta = self._strength(source, concept, notes)
        adjustment += delta
        adjustment += self._form(source, concept, notes)
        adjustment += self._brand(source, concept, notes)
        return Agreement(round(adjustment, 4), tier, ok, "; ".join(notes))

    # --- the four features ------------------------------------------------------------------------

    def _ingredients(self, source: DrugParse, concept: DrugParse, keys, notes) -> tuple[int, float]:
        words = set(source.words)
        implied = {w for word in words for key in self.brand_ingredients.get(word, ()) for w in key}
        known = words | implied
        found = [key for key in keys if key and all(_word_in(w, known) for w in key)]
        if not keys:
            return 0, 0.0
        names = ", ".join(" ".join(k) for k in keys)
        if len(found) == len(keys):
            via = "" if all(all(_word_in(w, words) for w in k) for k in found) else " (via brand)"
            notes.append(f"ingredients {names}{via} ✔")
            return 2, WEIGHTS["ingredient_all"]
        if found:
            notes.append(f"ingredients {len(found)}/{len(keys)} of {names} ~")
            return 1, WEIGHTS["ingredient_some"]
        notes.append(f"ingredients {names} not in source ✘")
        return 0, WEIGHTS["ingredient_none"]

    def _strength(self, source: DrugParse, concept: DrugParse, notes) -> tuple[bool, float]:
        said = ", ".join(dict.fromkeys(s.text for s in source.strengths))
        if not concept.strengths:
            return True, 0.0
        stated = ", ".join(str(s) for s in concept.strengths)
        if not source.strengths:
            notes.append(f"strength {stated}, source states none ~")
            return True, WEIGHTS["strength_unstated"]
        unmatched = [c for c in concept.strengths
                     if not any(strengths_agree(s, c) for s in source.strengths)]
        if not unmatched:
            notes.append(f"strength {stated} = source {said} ✔")
            return True, WEIGHTS["strength_agree"]
        if any(strength_comparable(s, c) for c in unmatched for s in source.strengths):
            notes.append(f"strength {stated} ≠ source {said} ✘")
            return False, WEIGHTS["strength_contradict"]
        notes.append(f"strength {stated} vs source {said}: not comparable ~")
        return True, 0.0

    def _form(self, source: DrugParse, concept: DrugParse, notes) -> float:
        wanted, offered = _product_forms(source), _product_forms(concept)
        if not offered:
            return 0.0
        if not wanted:
            notes.append(f"form {concept.dose_form}, source states none ~")
            return WEIGHTS["form_unstated"]
        if wanted & offered:
            notes.append(f"form {concept.dose_form} ~ source {'/'.join(sorted(wanted))} ✔")
            return WEIGHTS["form_agree"]
        notes.append(f"form {concept.dose_form} ≠ source {'/'.join(sorted(wanted))} ✘")
        return WEIGHTS["form_contradict"]

    def _brand(self, source: DrugParse, concept: DrugParse, notes) -> float:
        words = set(source.words)
        source_brands = {w for w in words if w in self.brand_ingredients}
        if not concept.brand:
            if source_brands:
                notes.append("generic, source names a brand ~")
                return WEIGHTS["brand_generic"]
            return 0.0
        brand_word = self._brand_word(concept.brand)
        if (brand_word and brand_word in words) or (
                _normalised(concept.brand) in _normalised(source.text)):
            notes.append(f"brand {concept.brand} ✔")
            return WEIGHTS["brand_agree"]
        if source_brands:
            notes.append(f"brand {concept.brand} ≠ source brand ✘")
            return WEIGHTS["brand_other"]
        notes.append(f"brand {concept.brand}, source names none ~")
        return WEIGHTS["brand_unstated"]


def _product_forms(parse: DrugParse) -> set[str]:
    forms = set(parse.product_forms)
    if forms & _ORAL_SOLIDS:
        forms.add("oral")
    if "oral" in parse.forms:
        forms.add("oral")
    return forms


def rerank_drugs(candidates: pd.DataFrame, texts: list[str], matcher: DrugMatcher,
                 top_k: int) -> pd.DataFrame:
    """Re-order each query's candidates by drug agreement and keep the top_k.

    `candidates` has `query`, `target_code`, `score` (and any other columns, kept); `texts[q]` is
    query q's source text. Adds `drug_adjustment`, `drug_agreement` (the explanation) and
    `drug_score`; `rank` is renumbered. The order is (ingredient tier, strength not contradicted,
    score + adjustment), see the module docstring.
    """
    parses = [parse_drug(t) for t in texts]
    rows = []
    for record in candidates.to_dict("records"):
        agreement = matcher.compare(parses[record["query"]], record["target_code"])
        record["drug_adjustment"] = agreement.adjustment
        record["drug_agreement"] = agreement.explanation
        record["drug_score"] = round(float(record["score"]) + agreement.adjustment, 4)
        record["_tier"] = (agreement.ingredient_tier, agreement.strength_ok)
        rows.append(record)
    if not rows:
        return candidates.assign(drug_adjustment=[], drug_agreement=[], drug_score=[])
    frame = pd.DataFrame(rows)
    frame["_ing"] = [t[0] for t in frame["_tier"]]
    frame["_ok"] = [t[1] for t in frame["_tier"]]
    frame = frame.sort_values(["query", "_ing", "_ok", "drug_score"],
                              ascending=[True, False, False, False], kind="stable")
    frame = frame.groupby("query", sort=False).head(top_k).copy()
    frame["rank"] = frame.groupby("query").cumcount() + 1
    return frame.drop(columns=["_tier", "_ing", "_ok"]).reset_index(drop=True)


# How deep the embedding search goes before re-ranking: the right strength or brand is often a
# few dozen names down when the source spells it differently.
EMBEDDING_POOL = 50


def is_drug_vocabulary(vocab) -> bool:
    """Whether most concepts are in the OMOP Drug domain (a `domain_id` column says so)."""
    if "domain_id" not in vocab.concepts.columns or vocab.concepts.empty:
        return False
    return (vocab.concepts["domain_id"].str.lower() == "drug").mean() >= 0.5


def rank_drug_candidates(index, vocab, queries, texts: list[str], top_k: int,
                         matcher: DrugMatcher | None = None) -> pd.DataFrame:
    """Embedding candidates plus concepts sharing a brand or ingredient word with the source,
    re-ranked by drug agreement (`rerank_drugs`). Same columns as `rank_candidates` plus the
    drug columns; a lexical candidate's `score` is the cosine of its best name."""
    import numpy as np

    from .config import RankConfig
    from .rank import rank_candidates

    matcher = matcher or DrugMatcher(vocab.concepts)
    found = rank_candidates(index, vocab, queries, RankConfig(top_k=max(EMBEDDING_POOL, top_k)))
    name_rows = vocab.names.groupby("code").indices
    preferred = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    names = vocab.names["name"].to_numpy()
    extra = []
    seen = set(zip(found["query"], found["target_code"]))
    for q, text in enumerate(texts):
        for code in sorted(matcher.lexical_candidates(parse_drug(text))):
            if (q, code) in seen or code not in name_rows:
                continue
            rows = name_rows[code]
            sims = index.vectors[rows] @ queries[q]
            best = int(np.argmax(sims))
            extra.append((q, 0, code, preferred.get(code, names[rows[best]]), names[rows[best]],
                          round(float(sims[best]), 4)))
    if extra:
        found = pd.concat([found, pd.DataFrame(extra, columns=found.columns)], ignore_index=True)
    return rerank_drugs(found, texts, matcher, top_k)
