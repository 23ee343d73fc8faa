"""A row that names its test's specimen field ("HPV Source", "BRCA Specimen"), and the LOINC codes
that are one.

Result lists carry, beside a test's results, the field that records which specimen the test was
run on. LOINC codes such a field by a component that names the specimen itself ("Specimen source
[Identifier] of Unspecified specimen", "Specimen site"), and the field of a test that may be run on
any specimen by the code whose own specimen is unspecified (LOINC's XXX): a field that reports
which specimen was taken fixes none. What is learned, not listed:

- the field components: components whose first word is "specimen";
- the words that end a row naming one (its head): their last words ("source", "site"), unless a
  component of another kind ends the row with the same word ("Blood product source"); and
  "specimen" itself or a spelling of it that no long name uses ("Spec", "Spcm"; "semen" is one
  that they use), unless a specimen word comes right before it ("Random Urine Specimen" states
  the row's specimen);
- which field a row means: the one its head names ("source"), or, where it names the specimen
  alone, the commonest field code of unspecified specimen (LOINC's common-test rank).

benchmarks/results/specimen-fields/RULE.md
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import pandas as pd

from ...read.normalize import spelled_from
from .commonness import code_rank, per_target
from .loinc import component_from_name, concept_axes, fold, ranked_codes, text_specimen

FIELD_WORD = "specimen"
MIN_SPELLING = 4  # letters of a spelling of "specimen" ("spec", "spcm")
_LINKS = frozenset({"from", "of", "in", "on", "by", "to", "or", "and"})
_WORD = re.compile(r"[^\W\d_]+")


def is_field_component(component: str) -> bool:
    """A component that names the specimen ("specimen source", "Specimen drawn from")."""
    words = fold(component).split()
    return len(words) >= 2 and words[0] == FIELD_WORD


def of_unspecified_specimen(system: str) -> bool:
    """A system that fixes no specimen: none, or LOINC's unspecified one ("XXX")."""
    folded = fold(system).strip()
    return not folded or folded == "xxx" or "unspecified" in folded


@functools.lru_cache(maxsize=1)
def _components() -> tuple[frozenset, frozenset]:
    """(the shipped field components' heads, every other shipped component, folded)."""
    components = {fold(component_from_name(n.split(" --")[0])).strip()
                  for n in ranked_codes()["name"]}
    fields = {c for c in components if is_field_component(c)}
    heads = {field_head(c) for c in fields} - {"", FIELD_WORD}
    return frozenset(heads), frozenset(components - fields)


@functools.lru_cache(maxsize=1)
def _long_name_words() -> frozenset:
    return frozenset(w for n in ranked_codes()["name"] for w in fold(n).split())


def _spells_specimen(word: str) -> bool:
    return word == FIELD_WORD or (len(word) >= MIN_SPELLING and word not in _long_name_words()
                                  and spelled_from(word, FIELD_WORD))


@functools.lru_cache(maxsize=1 << 14)
def named_field(text: str) -> tuple[str, str]:
    """(the word by which the row names its test's specimen field, as written, and the field's
    head it states: "source" of "HPV Source", "" for "BRCA Specimen", which names the specimen
    alone); ("", "") when the row names no field."""
    written = _WORD.findall(str(text))
    if not written:
        return "", ""
    head = fold(written[-1]).strip()
    heads, others = _components()
    if head in heads:
        ending = fold(" ".join(written)).strip()
        named = not any(ending.endswith(c) for c in others if c.endswith(f" {head}"))
        return (written[-1], head) if named else ("", "")
    if _spells_specimen(head):
        before = fold(written[-2]).strip() if len(written) >= 2 else ""
        return ("", "") if before and text_specimen(f" {before} ") else (written[-1], "")
    return "", ""


def field_head(component: str) -> str:
    """The last word of a field component that says which of the specimen's attributes it
    records ("source" of "Specimen source")."""
    words = [w for w in fold(component).split() if w not in _LINKS]
    return words[-1] if len(words) >= 2 else ""


@dataclass(frozen=True)
class TargetFields:
    """A target's specimen-field codes (any system), what a row that names a field adds to its
    candidates, and the commonest of those of unspecified specimen (LOINC's common-test rank):
    the field a row means when it names the specimen alone ("BRCA Specimen")."""

    codes: frozenset = frozenset()
    commonest: str = ""


@per_target
def target_fields(concepts: pd.DataFrame) -> TargetFields:
    """The TargetFields of a LOINC target's concepts: those whose component, as concept_axes
    reads it, begins with "specimen" (read once per target frame)."""
    named = concepts["name"].astype(str).str.lower().str.lstrip("[").str.startswith(FIELD_WORD)
    if "component" in concepts.columns:
        named |= concepts["component"].fillna("").astype(str).str.lower().str.startswith(FIELD_WORD)
    fields = {str(row["code"]): concept_axes(row) for row in concepts[named].to_dict("records")}
    fields = {code: axes for code, axes in fields.items() if is_field_component(axes.component)}
    ranked = sorted((code_rank(code), code) for code, axes in fields.items()
                    if of_unspecified_specimen(axes.system) and code_rank(code))
    return TargetFields(frozenset(fields), ranked[0][1] if ranked else "")


def concept_field(component: str, system: str, code: str, head: str, fields: TargetFields) -> str:
    """What the candidate is to a row naming a field by `head` (named_field): "field" when it is
    the field the row means (its head's field, or the commonest where the row names the
    specimen alone), of any specimen; else what it is instead ("result", "field of <system>",
    another field)."""
    if not is_field_component(component):
        return "result"
    if not of_unspecified_specimen(system):
        return f"field of {system}"
    if head and field_head(component) != head:
        return f"field of the specimen's {field_head(component)}, not its {head}"
    if not head and code != fields.commonest:
        return f"field less common than {fields.commonest or 'another'}"
    return "field"
