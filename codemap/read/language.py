"""Which language a code list is written in, detected once per file from its texts.

One guess per file, not per row: a lab label is two or three words ("Kalium Serum"), too short to
classify alone, while a few hundred labels joined are plenty. py3langid (langid.py's naive Bayes
over byte n-grams, offline, numpy only) scores the joined text. Its 97 languages include Latin,
which wins on short English medical labels ("Creatinine", "Albumin"); code lists are not written
in Latin, so the guess is restricted to the living languages clinical systems use.

Only words that carry a language are read: not numbers ("500mg", "5ml"), nor the words a caller
knows to be in no language (for a drug target, drug names, units and dose forms:
codemap.rank.prepare.language_free_words). Drug names look like words of some language
("Paracetamol 500mg tab", "Amoxicillin 250mg/5ml susp" were read as Danish); a list with too few
other words is written in no language in particular, and its language is left unknown.
"""
from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

from .normalize import LETTERS

# Languages of clinical code lists (ISO 639-1); Latin and other unlikely ones are left out on purpose.
CANDIDATE_LANGUAGES = ("en", "de", "fr", "es", "it", "pt", "nl", "da", "sv", "no", "fi", "pl",
                       "cs", "hu", "ro", "el", "tr", "ru", "uk", "zh", "ja", "ko", "ar", "he")
SAMPLE_ROWS = 500  # texts joined for the guess; more adds time, not accuracy
MIN_PROBABILITY = 0.5  # below this the guess is reported as uncertain
# Share of a list's words that must carry a language for a guess: "tabletter" of "Paracetamol 500
# mg tabletter" is one word of three (a Danish list), an English drug list has next to none.
MIN_LANGUAGE_SHARE = 0.2


@dataclass(frozen=True)
class LanguageGuess:
    """The detected (or given) language of a file's texts."""

    lang: str  # ISO 639-1 code, "" when unknown
    probability: float  # of the best language among CANDIDATE_LANGUAGES; 1.0 when given
    method: str  # "given" (--source-lang), "detected" or "uncertain"
    why: str = ""  # why the language is unknown, where it is

    def describe(self) -> str:
        if self.method == "given":
            return f"{self.lang} (given)"
        if not self.lang:
            return f"unknown ({self.why or 'no text'})"
        return f"{self.lang} ({self.method}, p={self.probability:.2f})"


def detect_language(texts: list[str], neutral: frozenset[str] = frozenset()) -> LanguageGuess:
    """Guess the language of `texts` taken together (first SAMPLE_ROWS non-empty ones) from
    their words that carry one (`language_words`; `neutral`: lower-case words in no language)."""
    sample = [t for t in texts if t and t.strip()][:SAMPLE_ROWS]
    if not sample:
        return LanguageGuess("", 0.0, "uncertain")
    words = [language_words(t, neutral) for t in sample]
    said, total = sum(len(w[0]) for w in words), sum(w[1] for w in words)
    if said == 0 or said < MIN_LANGUAGE_SHARE * total:
        return LanguageGuess("", 0.0, "uncertain", "too few words carry a language")
    lang, probability = _identifier().classify("\n".join(" ".join(w[0]) for w in words if w[0]))
    probability = float(probability)
    return LanguageGuess(lang, probability,
                         "detected" if probability >= MIN_PROBABILITY else "uncertain")


def language_words(text: str, neutral: frozenset[str] = frozenset()) -> tuple[list[str], int]:
    """(the words of `text` that carry a language, how many words it has): a word is a token
    between spaces with a letter; one with a digit ("500mg") carries none, nor one whose letter
    runs are all `neutral` ("gastro-resistant" where both halves are)."""
    # NFKC first: Japanese systems often write half-width katakana ("ｶﾘｳﾑ"), which the identifier
    # reads as Chinese, and full-width Latin letters ("ＣＲＰ").
    text = unicodedata.normalize("NFKC", text)
    tokens = [t for t in text.split() if LETTERS.search(t) and not any(c.isdigit() for c in t)]
    return [t for t in tokens if any(r.lower() not in neutral for r in LETTERS.findall(t))], len(tokens)


def source_language(texts: list[str], given: str | None,
                    neutral: frozenset[str] = frozenset()) -> LanguageGuess:
    """`--source-lang` when given (trusted as is), else the language detected from the words
    that carry one (`neutral`: see detect_language)."""
    if given:
        return LanguageGuess(given.strip().lower(), 1.0, "given")
    return detect_language(texts, neutral)


@functools.lru_cache(maxsize=1)
def _identifier():
    # Loading the model takes about a second; keep one per process.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(list(CANDIDATE_LANGUAGES))
    return identifier


# A target whose names in the source's language are at least this share of its names (LOINC with
# its German variant: 32 %) is searched as a same-language target for that source.
MIN_NAMES_SHARE = 0.2


def names_language(names, langs, prefer: str = "") -> str:
    """The main language of a vocabulary's names: from their `lang` tags where most names carry
    one (store imports do), else detected from a sample of the names ("" when unsure).

    `prefer` (the source list's language) is returned instead when at least MIN_NAMES_SHARE of
    the tagged names are in it: the source then meets names in its own language, so the fusion
    is the same-language one (codemap.rank.ranking_for)."""
    tags = [str(t).split("-")[0].lower() for t in langs if t is not None and str(t).strip()]
    if len(tags) * 2 > len(langs):
        if prefer and tags.count(prefer.split("-")[0].lower()) >= MIN_NAMES_SHARE * len(tags):
            return prefer.split("-")[0].lower()
        return max(set(tags), key=tags.count)
    step = max(1, len(names) // SAMPLE_ROWS)  # an even sample: vocabulary files are often sorted
    guess = detect_language(list(names[::step]))
    return guess.lang if guess.method == "detected" else ""
