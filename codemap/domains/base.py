"""What a domain is (codemap.domains says what it provides) and a target prepared by one."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..config import RankConfig
from ..vocab.vocabulary import Vocabulary


def _none(*_args) -> list:
    return []


@dataclass(frozen=True)
class Domain:
    """One kind of target and what codemap knows of it (see codemap.domains)."""

    name: str
    claims: Callable[[Vocabulary], bool]
    prepare: Callable[[Vocabulary], Vocabulary] = lambda vocab: vocab
    scorers: Callable[[Vocabulary, RankConfig], list] = _none
    text_steps: Callable[[Vocabulary], list] = _none
    sense_reader: Callable[[Vocabulary], Callable[[str], str] | None] = lambda vocab: None
    readings: Callable[[Vocabulary, RankConfig], list] = _none
    senses: Callable[[], dict[str, str]] = dict
    language_free_words: Callable[[Vocabulary], frozenset] = lambda vocab: frozenset()
    usage_rank: Callable[[str], int] = lambda code: 0
    evidence: tuple[str, ...] = ()  # the names of its scorers (what RankConfig.evidence_off names)
    short_forms: Callable[[list[tuple[str, str]]], dict[str, str]] = lambda pairs: {}
    unit_properties: Callable[[str], frozenset[str]] = lambda unit: frozenset()
    name_property: Callable[[str], str] = lambda name: ""
    name_analyte: Callable[[str], str] = lambda name: ""
    # Concepts a target carries or lacks together (code → key, None: each on its own): a drug
    # vocabulary holds every level of a drug it has, so a list's unmappable drug is one whose
    # ingredients it lacks altogether (`codemap calibrate` hides them so).
    carried_with: Callable[[Vocabulary], Callable[[str], object] | None] = lambda vocab: None
    # A site's conventions, from the (source text, code) pairs its reviewers approved onto the
    # target: {RankConfig field: value} for the axes the approvals settle, and what to say of it.
    conventions: Callable[[Vocabulary, list[tuple[str, str]]], tuple[dict, str]] = (
        lambda vocab, approved: ({}, "none"))


# A target no domain claims: general ranking only.
OTHER = Domain("other", claims=lambda vocab: True)


@dataclass(frozen=True)
class PreparedTarget:
    """A target vocabulary as ranking uses it: its domain (decided once) and the vocabulary with
    what the domain adds."""

    vocab: Vocabulary
    domain: Domain = field(default=OTHER)

    @property
    def kind(self) -> str:
        """"lab", "drug" or "other": what fusion weight and calibration a target gets."""
        return self.domain.name

    def scorers(self, rank: RankConfig) -> list:
        return self.domain.scorers(self.vocab, rank)

    def conventions(self, approved: list[tuple[str, str]]) -> tuple[dict, str]:
        return self.domain.conventions(self.vocab, approved)

    def with_vocab(self, vocab: Vocabulary) -> "PreparedTarget":
        return replace(self, vocab=vocab)
