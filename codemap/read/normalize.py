"""Formatting noise in source texts, removed before the encoder and the lexical index read them.

Local code lists carry marks of the system that printed them rather than of the test: letters
spaced out for emphasis ("G L U C O S E"), `*` or `#` flags on a label, a trailing filler word
("Lipase Test", "Glucose level"), an abbreviation repeated in brackets ("Sodium (Na) (Na)"),
doubled spaces and punctuation. Every rule here is about the form of the text, none names a test.
ALL-CAPS words stay as they are (the models are uncased; an abbreviation is recognised by its
form later, codemap.abbreviations). The original text is kept by the caller; `normalize_source`
only says what the text is read as.
"""
from __future__ import annotations

import re
import unicodedata

# A letter, and a letter or digit, of any script: Python's \w less digits and "_". Word splitting
# everywhere uses these, not [A-Za-z]: an ASCII class ends a word at "é" and reads the "Cr" of
# "Créatinine" as a word of its own (an abbreviation, an element symbol).
LETTER = r"[^\W\d_]"
LETTER_OR_DIGIT = r"[^\W_]"
LETTERS = re.compile(f"{LETTER}+")
WORDS = re.compile(f"{LETTER_OR_DIGIT}+")

# Three or more single letters (or digits) each separated by one space: a word spaced out.
_SPACED = re.compile(rf"(?<![\w])((?:{LETTER_OR_DIGIT} ){{2,}}{LETTER_OR_DIGIT})(?![\w])")
# Flags printed before or after a label. A trailing "#" is kept: in lab names it means an
# absolute count ("Neutrophils #", LOINC's "Neutrophils # Bld"), not a flag.
_LEADING_MARKS = re.compile(r"^[\s*#]+")
_TRAILING_MARKS = re.compile(r"[\s*]+$")
# A last word that says nothing about what is measured: lists append it to bare analyte names.
_FILLER = re.compile(r"(?<=\w)[\s,:-]+(?:test|tests|level|levels)\s*$", re.IGNORECASE)
# A bracketed group, or a word, repeated right after itself ("(Na) (Na)", "Serum Serum").
_REPEATED_GROUP = re.compile(r"(\([^()]*\)|\[[^\[\]]*\]|\b\w+\b)(?:\s*\1)+", re.IGNORECASE)
# The same punctuation mark twice or more ("Glucose,, serum", "Hb -- Blood").
_REPEATED_PUNCT = re.compile(r"([,;:./\-])(?:\s*\1)+")


def spelled_from(short: str, word: str) -> bool:
    """"creat" from "creatinine", "hgb" from "hemoglobin": same first letter, letters in order,
    the word longer (how LOINC's short names abbreviate its long names' words)."""
    if len(word) <= len(short) or not short or short[0] != word[0]:
        return False
    rest = iter(word[1:])
    return all(ch in rest for ch in short[1:])


def normalize_source(text: str) -> str:
    """`text` without formatting noise (see the module docstring); "" stays "".

    >>> normalize_source("G L U C O S E *")
    'GLUCOSE'
    >>> normalize_source("Sodium (Na) (Na)")
    'Sodium (Na)'
    """
    if not text:
        return text
    out = _SPACED.sub(lambda m: m.group(1).replace(" ", ""), text)
    out = _TRAILING_MARKS.sub("", _LEADING_MARKS.sub("", out))
    out = _REPEATED_GROUP.sub(r"\1", out)
    out = _REPEATED_PUNCT.sub(r"\1", out)
    out = " ".join(out.split())
    stripped = _FILLER.sub("", out).strip()
    # A text that is only noise ("***", "Test") is left as it was rather than emptied.
    return stripped or out or text


def source_key(text: str) -> str:
    """What makes two source texts the same source: case, the composition of accents and runs of
    spaces do not (the mapping memory's key, and its approved names' key)."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(text)).casefold()).strip()


def read_as_notes(texts, explanations, read_as=normalize_source):
    """Each candidate's explanation, led by what its source text was read as where reading
    changed it ("read as 'GLUCOSE'; name: encoder …"), so a reviewer sees why a noisy label
    matched. `texts` and `explanations` are aligned pandas Series; `read_as` is how ranking read
    a text (normalised, by default; also with cut words completed, codemap.rank.prepare)."""
    read = texts.fillna("").map(read_as)
    changed = read != texts.fillna("")
    notes = "read as '" + read + "'"
    rest = explanations.fillna("")
    joined = notes.where(rest == "", notes + "; " + rest)
    return explanations.where(~changed, joined)
