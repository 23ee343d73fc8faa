"""What ranking needs from a code list and a target, made the same way for `map` and `eval`:
each row's fields, abbreviation expansion, LOINC axes, the target domain's evidence scorers."""
from __future__ import annotations

from ..config import RankConfig
from ..read.readers import SourceTable
from ..vocab.vocabulary import Vocabulary
from .abbreviations import expand_abbreviations, with_expanded_short_names
from .drug_agreement import drug_scorers, is_drug_vocabulary
from .labs import add_loinc_axes, lab_scorers


def evidence_scorers(vocab: Vocabulary, rank: RankConfig) -> list:
    """The evidence scorers for the target's domain, as switched on in `rank`."""
    if is_drug_vocabulary(vocab):
        return drug_scorers(vocab.concepts) if rank.drug_evidence else []
    return lab_scorers(rank.unit_evidence, rank.specimen_evidence,
                       category=rank.category_evidence, usage=rank.usage_evidence)


def row_fields(source: SourceTable) -> list[dict]:
    """Each row's fields for the lexical index and evidence scorers: text, unit, specimen and
    every column of the list under its own name."""
    texts, units = source.texts, source.column(source.unit_col)
    specimens = source.column(source.specimen_col)
    records = source.frame.to_dict("records")
    return [{**record, "text": t, "unit": u, "specimen": s}
            for record, t, u, s in zip(records, texts, units, specimens)]


def text_expander(vocab: Vocabulary, rank: RankConfig):
    """`expand_abbreviations` with `rank.expand_abbreviations` and a LOINC target, else identity."""
    if rank.expand_abbreviations and vocab.id.upper().startswith("LOINC"):
        return expand_abbreviations
    return lambda text: text


def with_abbreviations(vocab: Vocabulary, rank: RankConfig):
    """The vocabulary with its short names also expanded when `text_expander` expands (else
    unchanged), and that expander."""
    expand = text_expander(vocab, rank)
    return (with_expanded_short_names(vocab) if expand is expand_abbreviations else vocab), expand


def with_axes(vocab: Vocabulary) -> Vocabulary:
    """Add LOINC axes (property, system, example units) to a LOINC vocabulary's concepts."""
    if vocab.id.upper().startswith("LOINC") and "property" not in vocab.concepts.columns:
        vocab.concepts = add_loinc_axes(vocab.concepts)
    return vocab
