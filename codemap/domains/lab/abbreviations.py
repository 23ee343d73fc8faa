"""Lab abbreviations learned from LOINC's own pairs of short names and long common names.

LOINC writes every code twice: "Hgb Bld-mCnc" and "Hemoglobin [Mass/volume] in Blood". Aligning
the two teaches what local lab lists abbreviate the same way (Hgb, Bld, SerPl, Ur, Creat, MCV,
RBC…). A short-name token is an abbreviation of long-name words when it

- is spelled from one long word (same first letter, its letters in order: "Creat", "Hgb", "Bld"),
- is the initials of consecutive long words ("MCV" = mean corpuscular volume, "PT"), or its
  CamelCase parts abbreviate consecutive words ("SerPl" = serum or plasma), or
- co-occurs with one long word in nearly every pair that has it ("RBC" → erythrocytes),

in at least `min_support` pairs. The learned table ships as `codemap/data/loinc/abbreviations.tsv`
(built by `recipes/build_abbreviations.py`); `expand_abbreviations` applies it to source texts
and to a vocabulary's short names.
"""
from __future__ import annotations

import csv
import functools
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from importlib import resources
from typing import Callable, Iterable, Mapping

import pandas as pd

from ...read.normalize import LETTER, LETTER_OR_DIGIT, spelled_from
from ...vocab.vocabulary import ENCODER_ONLY_EXPANDED, EXPANDED, Vocabulary

TABLE = "data/loinc/abbreviations.tsv"
_LINK_WORDS = {"or", "and", "in", "of", "by", "the", "to", "at", "for"}
# English words that short names also use as abbreviations ("IF" = immunofluorescence): a source
# text says "at" or "if" far more often than it abbreviates.
_NOT_ABBREVIATIONS = _LINK_WORDS | {"if", "on", "as", "is", "no", "not", "per", "with", "all",
                                    "an", "be", "it", "up", "we", "so", "do", "am", "pm"}
_TOKEN = re.compile(f"{LETTER}{LETTER_OR_DIGIT}*")  # any script: "Hämoglobin" is one token


@dataclass(frozen=True)
class Abbreviation:
    """One learned abbreviation: lower-cased short form → long words, with its evidence."""

    short: str
    expansion: str
    support: int  # pairs in which the short form stood for the expansion
    share: float  # support / pairs whose short name has the short form
    how: str  # "spelling", "initials" or "co-occurrence"


def _long_words(long_name: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9#]+", long_name.lower()) if w]


def _camel_parts(token: str) -> list[str]:
    return [p.lower() for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", token) if p]


def _phrase_matches(token: str, words: list[str]) -> list[tuple[str, str]]:
    """Expansions of a token spelled over consecutive long words (link words may sit between)."""
    parts = _camel_parts(token)
    letters = list(token.lower()) if token.isupper() and len(token) >= 2 else []
    found = []
    for pieces, how in ((parts, "spelling"), (letters, "initials")):
        if len(pieces) < 2:
            continue
        for start in range(len(words)):
            phrase, i, j = [], 0, start
            while i < len(pieces) and j < len(words):
                word = words[j]
                if word in _LINK_WORDS and phrase:
                    phrase.append(word)
                    j += 1
                    continue
                if word.startswith(pieces[i]) or (how == "spelling"
                                                  and spelled_from(pieces[i], word)):
                    phrase.append(word)
                    i, j = i + 1, j + 1
                else:
                    break
            if i == len(pieces):
                while phrase and phrase[-1] in _LINK_WORDS:
                    phrase.pop()
                found.append((" ".join(phrase), how))
    return found


def learn_abbreviations(pairs: Iterable[tuple[str, str]], min_support: int = 3,
                        min_share: float = 0.5) -> list[Abbreviation]:
    """Abbreviations seen in (short name, long name) pairs; see the module docstring."""
    seen: Counter = Counter()  # short form → pairs whose short name has it (and whose long lacks it)
    votes: dict[str, Counter] = defaultdict(Counter)  # short form → (expansion, how) → pairs
    cooc: dict[str, Counter] = defaultdict(Counter)  # short form → long word → pairs
    word_pairs: Counter = Counter()  # long word → pairs
    order: dict[str, int] = {}  # long word → its first position seen, to order co-occurring words
    n = 0
    for short_name, long_name in pairs:
        n += 1
        words = _long_words(long_name)
        word_set = set(words)
        word_pairs.update(word_set)
        for position, word in enumerate(words):
            order.setdefault(word, position)
        for token in dict.fromkeys(_TOKEN.findall(short_name)):
            key = token.lower()
            if key in word_set or len(key) < 2 or key.isdigit() or key in _NOT_ABBREVIATIONS:
                continue
            seen[key] += 1
            cooc[key].update(list(dict.fromkeys(words)))  # ordered: ties break the same every run
            hits = {(w, "spelling") for w in words if spelled_from(key, w)}
            hits |= set(_phrase_matches(token, words))
            for hit in hits:
                votes[key][hit] += 1
    learned = []
    for key, count in seen.items():
        if word_pairs[key] > count:  # mostly a word of long names itself ("Ab", "HIV")
            continue
        best = _best_vote(votes[key], count, min_support, min_share)
        if best is None:
            best = _best_cooccurrence(cooc[key], count, word_pairs, n, min_support, order)
        if best is not None:
            expansion, how, support = best
            learned.append(Abbreviation(key, expansion, support, round(support / count, 3), how))
    return sorted(learned, key=lambda a: a.short)


def _best_vote(votes: Counter, count: int, min_support: int, min_share: float):
    if not votes:
        return None
    # Longer phrases first among equals: "serum or plasma" beats "serum" for "serpl".
    (expansion, how), support = max(votes.items(), key=lambda kv: (kv[1], len(kv[0][0]), kv[0]))
    if support < min_support or support / count < min_share:
        return None
    return expansion, how, support


def _best_cooccurrence(cooc: Counter, count: int, word_pairs: Counter, n: int, min_support: int,
                       order: dict):
    """The long words present in nearly every pair of the short form and rare elsewhere, in
    long-name order ("BUN" → urea nitrogen)."""
    words = [w for w, support in cooc.items()
             if support >= max(min_support, 5) and support / count >= 0.9
             and (support / count) / (word_pairs[w] / n) >= 20
             and len(w) > 2 and not w.isdigit() and w not in _LINK_WORDS]
    if not words:
        return None
    words.sort(key=lambda w: (order.get(w, 0), w))
    return " ".join(words), "co-occurrence", min(cooc[w] for w in words)


def write_abbreviations(learned: list[Abbreviation], handle) -> None:
    """The learned table as TSV (short, expansion, support, share, how)."""
    writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
    writer.writerow(["short", "expansion", "support", "share", "how"])
    for a in learned:
        writer.writerow([a.short, a.expansion, a.support, a.share, a.how])


@functools.lru_cache(maxsize=1)
def builtin_abbreviations() -> dict[str, str]:
    """The shipped table: lower-cased short form → expansion."""
    with (resources.files("codemap") / TABLE).open(encoding="utf-8") as handle:
        return {row["short"]: row["expansion"] for row in csv.DictReader(handle, delimiter="\t")}


def expand_abbreviations(text: str, table: Mapping[str, str] | None = None) -> str:
    """`text` with each known abbreviation followed by its expansion ("Hgb Bld" → "Hgb hemoglobin
    Bld blood"); the abbreviation stays, since LOINC short names in the index use it too. Words
    whose expansion the text already holds are left alone."""
    table = builtin_abbreviations() if table is None else table
    lowered = text.lower()

    def expand(match: re.Match) -> str:
        token = match.group(0)
        expansion = table.get(token.lower())
        if expansion is None or expansion in lowered:
            return token
        return f"{token} {expansion}"

    return _TOKEN.sub(expand, text)


def with_expanded_short_names(vocab: Vocabulary, table: Mapping[str, str] | None = None,
                              every_name: bool = False, lexical: bool = False,
                              then: Callable[[str], str] | None = None) -> Vocabulary:
    """A copy of `vocab` whose short names also appear expanded (name_type "short expanded", read
    by the encoder only: codemap.rank.lexical), so an expanded source text ("Cotinine Ur urine")
    meets an expanded short name rather than the raw "Cotinine Ur-mCnc". The copy's content hash
    differs, so it gets its own index cache. `every_name`: expand every name, not only those
    typed "short" (a table that does not say which of its names are short names; long names are
    rarely changed). `lexical`: the expanded names are typed "expanded" and count in the lexical
    index too (a table with no long names, where they are a spelled-out row's only n-grams).
    `then`: a further reading of each expanded name (codemap.readings.senses's senses)."""
    names = vocab.names
    short = names if every_name else names[names["name_type"] == "short"]
    read = (lambda t: expand_abbreviations(t, table)) if then is None else (
        lambda t: then(expand_abbreviations(t, table)))
    expanded = short.assign(name=short["name"].map(read),
                            name_type=EXPANDED if lexical else ENCODER_ONLY_EXPANDED)
    expanded = expanded[expanded["name"] != short["name"]]
    names = pd.concat([vocab.names, expanded], ignore_index=True)
    return Vocabulary(vocab.id, vocab.version, vocab.concepts, names, vocab.notice, vocab.source,
                      vocab.relations)
