"""What ranking needs from a code list and a prepared target (codemap.domains.PreparedTarget),
made the same way for every caller: each row's fields, how a source text is prepared and read a
second time, the ranking settings for a pair of languages. Everything a domain adds comes
through the registry; nothing here names a domain."""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from ..config import RankConfig
from ..domains import PreparedTarget, all_senses
from ..embed.manifest import ModelInfo
from ..read.normalize import normalize_source
from ..read.readers import SourceTable
from ..readings.glosses import gloss_reader
from ..readings.senses import domain_expander
from ..readings.word_completion import word_completer


def ranking_for(config: RankConfig, domain: str, model: ModelInfo, source_lang: str,
                target_lang: str) -> RankConfig:
    """The ranking settings for a target of this domain (`target_domain`), model and pair of
    languages.

    Same language (or the list's language unknown): a trained model's own fusion weight for the
    target's domain, when its manifest names one (ModelInfo.encoder_weight: coder-en and
    coder-multilingual score the names of targets other than LOINC and drug vocabularies by the
    encoder alone, where the lexical score only added noise to paraphrases;
    benchmarks/results/target-weight/RULE-domain-weight.md), unless `--encoder-weight` fixed one.

    Across languages, source texts are not completed from the target's words (a German "Akut…"
    would become an English word; ICD-10-GM → ICD-10-CM acc@1 0.827 with it, 0.930 without:
    benchmarks/results/fusion/RULE-crosslingual-completion.md). With a multilingual model the
    encoder then also gets the cross-lingual weight, and the usage prior (LOINC common test rank)
    keeps `crosslingual_usage_share` of its weight, 0 as shipped: its bonus was sized against the
    same-language fusion's score spread, and on the nearly flat cross-lingual scores of
    multilingual-e5 it outweighed the names (German LOINC set: acc@1 0.817 without it, 0.713
    with); with coder-multilingual it helps label lists and costs LOINC long names
    (benchmarks/results/crosslingual-usage/).
    """
    if not (source_lang and target_lang and source_lang != target_lang):
        weight = model.encoder_weight(domain) if config.model_weights else None
        return config if weight is None else replace(config, encoder_weight=weight)
    config = replace(config, complete_words=False, crosslingual_from=source_lang)
    if model.multilingual():
        share = config.crosslingual_usage_share
        return replace(config, encoder_weight=config.crosslingual_encoder_weight,
                       usage_evidence=config.usage_evidence and share > 0, usage_share=share)
    return config


def row_fields(source: SourceTable) -> list[dict]:
    """Each row's fields for the lexical index and evidence scorers: text, unit, specimen and
    every column of the list under its own name."""
    texts, units = source.texts, source.column(source.unit_col)
    specimens = source.column(source.specimen_col)
    records = source.frame.to_dict("records")
    return [{**record, "text": t, "unit": u, "specimen": s}
            for record, t, u, s in zip(records, texts, units, specimens)]


def text_expander(target: PreparedTarget, rank: RankConfig):
    """How source texts are prepared for the encoder and the lexical index, the one place for
    every caller: formatting noise removed (codemap.read.normalize); the target domain's text
    steps (a LOINC target: a leading element symbol followed by its element, "K+" → "K+
    potassium"); with `rank.complete_words`, cut words completed from the target's words
    (codemap.readings.word_completion). Abbreviations are a second reading of the prepared text
    (`second_reader`), not part of it."""
    steps = [normalize_source, *target.domain.text_steps(target.vocab)]
    if rank.complete_words:
        steps.append(word_completer(target.vocab))
    return _chain(steps)


def second_reader(target: PreparedTarget, rank: RankConfig) -> Callable[[str], str] | None:
    """A prepared text → its second reading (`with_readings`), or None when nothing reads one:
    with `rank.expand_abbreviations`, each abbreviation followed by its sense in the target's
    domain ("Hb" → "Hb hemoglobin", codemap.readings.senses, or the domain's own sense reading);
    the domain's further readings (a list in another language than a LOINC target's names: the
    English words of its LOINC parts, "Natrium" → "Natrium sodium"); with `rank.gloss_words`, a
    Chinese list against any target gets its words' English glosses in the target's senses
    ("钾" → "钾 potassium", codemap.readings.glosses)."""
    steps = []
    if rank.expand_abbreviations:
        steps.append(target.domain.sense_reader(target.vocab)
                     or domain_expander(target.vocab, all_senses()))
    steps += target.domain.readings(target.vocab, rank)
    if rank.reads_glosses:
        steps.append(gloss_reader(target.vocab, rank.crosslingual_from))
    steps = [step for step in steps if step is not None]
    return _chain(steps) if steps else None


def _chain(steps: list[Callable[[str], str]]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return apply


def language_free_words(target: PreparedTarget) -> frozenset[str]:
    """Words of a list that tell nothing of its language, for this target (codemap.read.language
    reads the others): the domain says which (a drug target: its names' words, the ingredient
    names, written units and dose forms)."""
    return target.domain.language_free_words(target.vocab)


def with_readings(rows: list[dict], texts: list[str], reader: Callable[[str], str] | None,
                  encode: Callable[[list[str]], np.ndarray]) -> list[dict]:
    """`rows` with a second reading where `reader` changes a row's text: row["reading"] =
    (its read lexical text, the encoder vector of its read `texts` entry); rank_hybrid scores
    each name by the better of the two readings.

    Why a second reading and not a rewrite: a sense adds words in the lexicon's wording ("LDL" →
    "low density lipoprotein", where LOINC writes "Cholesterol in LDL"), which pulls a rewritten
    text away from names that matched the abbreviation itself; kept beside the text, the sense
    can only lift the names it matches ("Hb hemoglobin" lifts "Hemoglobin [Mass/volume] in
    Blood" over "Most predominant Hb DBS").
    """
    if reader is None:
        return rows
    read = [reader(t) for t in texts]
    changed = [i for i, (t, r) in enumerate(zip(texts, read)) if r != t]
    if not changed:
        return rows
    read_vectors = encode([read[i] for i in changed])
    rows = list(rows)
    for i, vector in zip(changed, read_vectors):
        rows[i] = {**rows[i], "reading": (reader(rows[i]["text"]), vector)}
    return rows


def both_readings(prepare: Callable[[str], str], reader: Callable[[str], str] | None):
    """How ranking read a source text, for its explanation: the prepared text and, where
    `reader` (second_reader) adds to it, its second reading ("Hb' and as 'Hb hemoglobin")."""
    if reader is None:
        return prepare

    def read(text: str) -> str:
        first = prepare(text)
        second = reader(first)
        return first if second == first else f"{first}' and as '{second}"
    return read


