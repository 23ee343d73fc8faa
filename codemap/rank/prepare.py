"""What ranking needs from a code list and a target, made the same way for `map` and `eval`:
each row's fields, abbreviation expansion, LOINC axes, the target domain's evidence scorers."""
from __future__ import annotations

from ..config import RankConfig
from ..read.readers import SourceTable
from ..vocab.vocabulary import Vocabulary
from ..read.normalize import normalize_source
from ..vocab.drug_names import with_other_names
from .abbreviations import with_expanded_short_names
from .drug_agreement import drug_scorers, is_drug_vocabulary
from .lab_evidence import lab_scorers
from .labs import add_loinc_axes
from .sense_lexicon import domain_expander
from .word_completion import word_completer


def evidence_scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    """The evidence scorers for the target's domain, as switched on in `rank`."""
    if is_drug_vocabulary(vocab):
        return drug_scorers(vocab.concepts) if rank.drug_evidence else []
    return lab_scorers(rank.unit_evidence, rank.specimen_evidence,
                       category=rank.category_evidence, usage=rank.usage_evidence,
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
    both `map` and `eval`: formatting noise removed (codemap.read.normalize); with
    `rank.complete_words`, cut words completed from the target's words
    (codemap.rank.word_completion); with `rank.expand_abbreviations`, abbreviations followed by
    their sense in the target's domain (codemap.rank.sense_lexicon)."""
    steps = [normalize_source]
    if rank.complete_words:
        steps.append(word_completer(vocab))
    if rank.expand_abbreviations:
        steps.append(domain_expander(vocab))

    def prepare(text: str) -> str:
        for step in steps:
            text = step(text)
        return text
    return prepare


def with_abbreviations(vocab: Vocabulary, rank: RankConfig):
    """The vocabulary with extra names, and the source `text_expander`: LOINC short names also
    expanded ("Chol SerPl-mCnc" → "… cholesterol serum or plasma …": short names match poorly as
    raw strings); drug names also written with the ingredient's other nonproprietary name
    ("Acetaminophen 325 MG" → "paracetamol 325 MG", codemap.vocab.drug_names)."""
    if vocab.id.upper().startswith("LOINC"):
        vocab = with_expanded_short_names(vocab)
    elif is_drug_vocabulary(vocab):
        vocab = with_other_names(vocab)
    return vocab, text_expander(vocab, rank)


def with_axes(vocab: Vocabulary) -> Vocabulary:
    """Add LOINC axes (property, system, example units) to a LOINC vocabulary's concepts."""
    if vocab.id.upper().startswith("LOINC") and "property" not in vocab.concepts.columns:
        vocab.concepts = add_loinc_axes(vocab.concepts)
    return vocab
