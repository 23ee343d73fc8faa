"""What ranking needs from a code list and a target, made the same way for `map` and `eval`:
each row's fields, abbreviation expansion, LOINC axes, the target domain's evidence scorers."""
from __future__ import annotations

import functools
from dataclasses import replace
from typing import Callable

import numpy as np

from ..config import RankConfig
from ..embed.manifest import ModelInfo
from ..read.readers import SourceTable
from ..vocab.vocabulary import Vocabulary, builtin_loinc
from ..read.normalize import LETTERS, normalize_source
from ..vocab.drug_names import one_spelling, with_other_names
from .abbreviations import with_expanded_short_names
from .drug_agreement import drug_scorers, is_drug_vocabulary
from .drugs import written_words
from .element_symbols import symbol_reader
from .lab_evidence import lab_scorers
from .loinc_parts import is_loinc_code, reads_as_short_names, with_short_name_axes
from .dictionary_reading import gloss_reader
from .part_translation import part_reader
from .labs import add_loinc_axes
from .sense_lexicon import domain_expander
from .word_completion import word_completer


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


def target_domain(vocab: Vocabulary) -> str:
    """drug (a Drug-domain target), lab (`is_loinc_target`) or other: what fusion weight and
    calibration a target gets."""
    if is_drug_vocabulary(vocab):
        return "drug"
    return "lab" if is_loinc_target(vocab) else "other"


def language_free_words(vocab: Vocabulary) -> frozenset[str]:
    """Lower-case words of a list that tell nothing of the language it is written in, for this
    target (codemap.read.language reads the others): for a drug target, the words of its names
    (ingredient and brand names, units, RxNorm dose forms), the international and US ingredient
    names (codemap.vocab.drug_names) and the written units and dose forms (codemap.rank.drugs).
    None for any other target: its names are words of a language."""
    if not is_drug_vocabulary(vocab):
        return frozenset()
    names = {w.lower() for name in vocab.names["name"] for w in LETTERS.findall(str(name))}
    ingredients = {word for name in one_spelling() for word in name.split()}
    return frozenset(names | ingredients | written_words())


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
    is off: its bonus was sized against the same-language fusion's score spread, and on the
    nearly flat cross-lingual scores of multilingual-e5 it outweighs the names (German LOINC set:
    acc@1 0.817 without it, 0.713 with).
    """
    if not (source_lang and target_lang and source_lang != target_lang):
        weight = model.encoder_weight(domain) if config.model_weights else None
        return config if weight is None else replace(config, encoder_weight=weight)
    config = replace(config, complete_words=False, crosslingual_from=source_lang)
    if model.multilingual():
        return replace(config, encoder_weight=config.crosslingual_encoder_weight,
                       usage_evidence=False)
    return config


def evidence_scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    """The evidence scorers for the target's domain, as switched on in `rank`."""
    if is_drug_vocabulary(vocab):
        return drug_scorers(vocab.concepts) if rank.drug_evidence else []
    return lab_scorers(rank.unit_evidence, rank.specimen_evidence,
                       category=rank.category_evidence, usage=rank.usage_evidence,
                       twin_ties=rank.twin_ties,
                       text=rank.text_evidence, usual=rank.usual_evidence,
                       backoff=rank.component_backoff, off=rank.evidence_off)


def row_fields(source: SourceTable) -> list[dict]:
    """Each row's fields for the lexical index and evidence scorers: text, unit, specimen and
    every column of the list under its own name."""
    texts, units = source.texts, source.column(source.unit_col)
    specimens = source.column(source.specimen_col)
    records = source.frame.to_dict("records")
    return [{**record, "text": t, "unit": u, "specimen": s}
            for record, t, u, s in zip(records, texts, units, specimens)]


def text_expander(vocab: Vocabulary, rank: RankConfig):
    """How source texts are prepared for the encoder and the lexical index, the one place for
    both `map` and `eval`: formatting noise removed (codemap.read.normalize); for a LOINC target,
    a leading element symbol followed by its element ("K+" → "K+ potassium",
    codemap.rank.element_symbols); with `rank.complete_words`, cut words completed from the
    target's words (codemap.rank.word_completion). Abbreviations are a second reading of the
    prepared text (`second_reader`), not part of it."""
    steps = [normalize_source]
    if is_loinc_target(vocab):
        steps.append(symbol_reader(vocab))
    if rank.complete_words:
        steps.append(word_completer(vocab))

    def prepare(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return prepare


def second_reader(vocab: Vocabulary, rank: RankConfig) -> Callable[[str], str] | None:
    """A prepared text → its second reading (`with_readings`), or None when nothing reads one:
    with `rank.expand_abbreviations`, each abbreviation followed by its sense in the target's
    domain ("Hb" → "Hb hemoglobin", codemap.rank.sense_lexicon; a LOINC table named by short
    names alone has no long words to choose senses by: the built-in LOINC's long names choose
    them); with `rank.translate_parts`, a list in another language than a LOINC target's names
    also gets the English words of its LOINC parts ("Natrium" → "Natrium sodium",
    codemap.rank.part_translation); with `rank.gloss_words`, a Chinese list against any target
    gets its words' English glosses in the target's senses ("钾" → "钾 potassium",
    codemap.rank.dictionary_reading)."""
    steps = []
    if rank.expand_abbreviations:
        steps.append(lab_sense_reader() if named_by_short_names(vocab) else domain_expander(vocab))
    if rank.reads_parts and is_loinc_target(vocab):
        steps.append(part_reader(rank.crosslingual_from))
    if rank.reads_glosses:
        steps.append(gloss_reader(vocab, rank.crosslingual_from))
    steps = [step for step in steps if step is not None]
    if not steps:
        return None

    def read(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return read


@functools.lru_cache(maxsize=1)
def lab_sense_reader() -> Callable[[str], str]:
    """Abbreviation senses chosen by the built-in LOINC's names (codemap.rank.sense_lexicon)."""
    return domain_expander(builtin_loinc())


def named_by_short_names(vocab: Vocabulary) -> bool:
    """A LOINC table whose names are LOINC short names ("ALP SerPl-cCnc") with no long name
    beside them: none typed "short" (the built-in LOINC and an imported release type theirs),
    and the concepts' names read as short names (loinc_parts.reads_as_short_names)."""
    return (is_loinc_target(vocab) and not (vocab.names["name_type"] == "short").any()
            and reads_as_short_names(vocab.concepts["name"]))


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


def with_abbreviations(vocab: Vocabulary, rank: RankConfig):
    """The vocabulary with extra names, and the source `text_expander`: LOINC short names also
    expanded ("Chol SerPl-mCnc" → "… cholesterol serum or plasma …": short names match poorly as
    raw strings); drug names also written with the ingredient's other nonproprietary name
    ("Acetaminophen 325 MG" → "paracetamol 325 MG", codemap.vocab.drug_names)."""
    if named_by_short_names(vocab):
        # No long name beside them: the expansions are a spelled-out row's only n-grams
        # ("Alkaline Phosphatase" vs "ALP SerPl-cCnc"), so they count lexically too
        # (benchmarks/results/lab-text/RULE-short-name-lexical.md), and they also carry the
        # lab senses a row's second reading gets ("IgG" → "IgG immunoglobulin G",
        # RULE-short-name-senses.md).
        vocab = with_expanded_short_names(vocab, every_name=True, lexical=True,
                                          then=lab_sense_reader())
    elif is_loinc_target(vocab):
        # A table that types no short names may hold them as its names ("Hgb Bld-mCnc"):
        # every name is then expanded (RULE-short-name-tables.md).
        typed = (vocab.names["name_type"] == "short").any()
        vocab = with_expanded_short_names(vocab, every_name=not typed)
    elif is_drug_vocabulary(vocab):
        vocab = with_other_names(vocab)
    return vocab, text_expander(vocab, rank)


def with_axes(vocab: Vocabulary) -> Vocabulary:
    """Add LOINC axes (property, system, example units) to a LOINC vocabulary's concepts; a
    table named by LOINC short names ("Sodium Ur-sCnc") gets the axes its long names would give
    (codemap.rank.loinc_parts.with_short_name_axes), not its names read as long names."""
    if "property" not in vocab.concepts.columns and is_loinc_target(vocab):
        concepts = vocab.concepts
        if "short_name" not in concepts.columns and reads_as_short_names(concepts["name"]):
            concepts = with_short_name_axes(concepts)
        vocab.concepts = add_loinc_axes(concepts)
    return vocab
