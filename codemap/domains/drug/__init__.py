"""Medications: the drug domain (RxNorm-style drug concepts, OMOP's Drug domain).

What it knows: a drug string's ingredients, strengths, dose form and brand (parse), those parts
compared with each candidate (agreement), and an ingredient's international and US names
(names: paracetamol ↔ acetaminophen).
"""
from __future__ import annotations

from ...config import RankConfig
from ...read.normalize import LETTERS
from ...vocab.vocabulary import Vocabulary
from ..base import Domain
from .agreement import DRUG_FEATURES, drug_scorers, ingredient_sets, is_drug_vocabulary
from .names import one_spelling, with_other_names
from .parse import written_words


def scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    return [s for s in drug_scorers(vocab.concepts) if s.name not in rank.evidence_off]


def language_free_words(vocab: Vocabulary) -> frozenset[str]:
    """Lower-case words of a list that tell nothing of its language (codemap.read.language reads
    the others): the words of the target's names (ingredient and brand names, units, RxNorm dose
    forms), the international and US ingredient names and the written units and dose forms."""
    names = {w.lower() for name in vocab.names["name"] for w in LETTERS.findall(str(name))}
    ingredients = {word for name in one_spelling() for word in name.split()}
    return frozenset(names | ingredients | written_words())


def carried_with(vocab: Vocabulary):
    """A drug concept's ingredient set (as the parser reads its name, in one spelling): a
    vocabulary holds a drug's clinical drugs, components and brands alike, so it lacks them
    together (benchmarks/results/missing-drugs/RULE.md)."""
    return ingredient_sets(vocab.concepts).get


DRUG = Domain(name="drug", claims=is_drug_vocabulary, prepare=with_other_names, scorers=scorers,
              language_free_words=language_free_words, evidence=DRUG_FEATURES,
              carried_with=carried_with)
