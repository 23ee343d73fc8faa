"""Pseudo-queries drawn from a target vocabulary itself, to fit a ranker without dev data.

A concept with several names gives a query for free: one of its names (a synonym, a short name,
a name in another language) is the query, and that exact name row is hidden from the scoring
(leave-one-name-out), so the concept must be found through its other names, as a local term is.
Without the mask the query meets itself: encoder and lexical both score 1.0 and a ranker learns
nothing. A concept with one name gets a noised form of it instead (abbreviated with the
vocabulary's own short-name pairs or by cutting words to a prefix, a word or the bracketed part
dropped, words reordered, a typo, case changed), and keeps its name.

A share of the queries is made "absent": every name of their concept is hidden, so the right
answer is not in the target, as for the local terms that have no standard code. Those queries
teach the confidence calibration what a wrong top candidate looks like; the ranker itself learns
only from queries whose concept is present.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ..domains import short_forms
from ..vocab.vocabulary import Vocabulary

GENERATION = 2  # bumped when the drawing changes: a cached ranker fitted on older draws is refitted
_BRACKETED = re.compile(r"\s*[\[(][^\])]*[\])]")
_SHORT_TYPES = ("short", "abbreviation", "acronym")


@dataclass(frozen=True)
class PseudoQuery:
    """One query made from the vocabulary: its text, its concept, the name rows it must not see."""

    text: str
    code: str
    hidden: np.ndarray  # name rows masked for this query (its own name, or all of an absent concept's)
    lang: str  # language of the name the query came from ("" when unknown)
    absent: bool  # the concept's names are all hidden: no right answer in the target


def draw(vocab: Vocabulary, count: int, seed: int,
         excluded: frozenset = frozenset()) -> list[PseudoQuery]:
    """`count` pseudo-queries from distinct concepts (fewer when the vocabulary is smaller);
    `excluded` codes are never drawn (a target with those concepts removed)."""
    rng = np.random.default_rng(seed)
    names = vocab.names
    rows_of = names.groupby("code", sort=True).indices  # code → name row numbers
    codes = np.array([c for c in rows_of if c not in excluded])
    picked = rng.choice(codes, size=min(count, len(codes)), replace=False)
    shorten = abbreviation_table(vocab)
    texts, langs = names["name"].to_numpy(), names["lang"].to_numpy()
    out = []
    for code in picked:
        rows = np.asarray(rows_of[code])
        own = int(rng.choice(rows))
        if len(rows) > 1:
            # Another name of the concept is the query, and half the time also noised: local
            # terms are rarely a vocabulary's name verbatim.
            text, hidden = texts[own], np.array([own])
            text = noised(text, rng, shorten) if rng.random() < 0.5 else text
        else:
            text, hidden = noised(texts[own], rng, shorten), np.array([], dtype=np.int64)
        out.append(PseudoQuery(text, str(code), hidden.astype(np.int64), str(langs[own] or ""),
                               False))
    return out


def make_absent(queries: list[PseudoQuery], vocab: Vocabulary, share: float,
                seed: int) -> list[PseudoQuery]:
    """The queries with `share` of them made absent (every name of their concept hidden)."""
    rng = np.random.default_rng(seed)
    rows_of = vocab.names.groupby("code").indices
    return [replace(p, hidden=np.asarray(rows_of[p.code], dtype=np.int64), absent=True)
            if rng.random() < share else p for p in queries]


def abbreviation_table(vocab: Vocabulary) -> dict[str, str]:
    """Long word(s) → short form, learned (by the domains: codemap.domains.short_forms) from the
    vocabulary's own pairs of a preferred name and a short name of one concept (LOINC
    "Hemoglobin … in Blood" / "Hgb Bld-mCnc"); empty when the vocabulary has no short names."""
    names = vocab.names
    short = names[names["name_type"].isin(_SHORT_TYPES)]
    if short.empty:
        return {}
    preferred = names[names["name_type"] == "preferred"].drop_duplicates("code").set_index("code")["name"]
    pairs = [(s, preferred[c]) for c, s in zip(short["code"], short["name"]) if c in preferred.index]
    return short_forms(pairs)


def noised(name: str, rng: np.random.Generator, shorten: dict[str, str]) -> str:
    """A name as a local list might write it: one or two edits drawn at random; never empty."""
    edits = [_abbreviate, _drop_part, _reorder, _typo, _recase]
    text = name
    for pick in rng.choice(len(edits), size=int(rng.integers(1, 3)), replace=False):
        changed = edits[pick](text, rng, shorten)
        text = changed if changed.strip() else text
    return text


def _abbreviate(text: str, rng, shorten: dict[str, str]) -> str:
    """The vocabulary's own short forms where it has them, else long words cut to a prefix
    ("Cerebral Ventricle" → "Cereb Vent"), as short descriptions do."""
    lower = text.lower()
    for long, short in shorten.items():
        if f" {long} " in f" {lower} " and rng.random() < 0.7:
            start = f" {lower} ".index(f" {long} ")
            text = text[:start] + short + text[start + len(long):]
            lower = text.lower()
    words = text.split(" ")
    return " ".join(w[:int(rng.integers(3, 6))] if len(w) > 6 and rng.random() < 0.5 else w
                    for w in words)


def _drop_part(text: str, rng, shorten) -> str:
    """The first words kept (a bare analyte, a term without its qualifiers), the bracketed
    part, the part after the last comma, or one word dropped."""
    if rng.random() < 0.3:
        words = text.split()
        return " ".join(words[:int(rng.integers(1, 4))])
    if _BRACKETED.search(text) and rng.random() < 0.5:
        return _BRACKETED.sub("", text, count=1).strip()
    if "," in text and rng.random() < 0.5:
        return text.rsplit(",", 1)[0].strip()
    words = text.split()
    if len(words) < 3:
        return text
    words.pop(int(rng.integers(len(words))))
    return " ".join(words)


def _reorder(text: str, rng, shorten) -> str:
    """Two halves swapped, with a comma ("Ventricle, cerebral")."""
    words = text.split()
    if len(words) < 2:
        return text
    cut = int(rng.integers(1, len(words)))
    return " ".join(words[cut:]) + ", " + " ".join(words[:cut])


def _typo(text: str, rng, shorten) -> str:
    """One letter dropped, doubled or swapped with its neighbour."""
    if len(text) < 4:
        return text
    i = int(rng.integers(1, len(text) - 1))
    kind = int(rng.integers(3))
    if kind == 0:
        return text[:i] + text[i + 1:]
    if kind == 1:
        return text[:i] + text[i] + text[i:]
    return text[:i - 1] + text[i] + text[i - 1] + text[i + 1:]


def _recase(text: str, rng, shorten) -> str:
    return text.upper() if rng.random() < 0.5 else text.lower()
