"""Counts of training knowledge graphs, per `--kg` source: concepts, names, names per concept,
triplets (relations, before build_graph adds synonym triplets) and languages, with load time.

usage: python benchmarks/training/kg_counts.py [--data-dir ../shared/data] icd10 icd10pcs …
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from codemap.train.sources import resolve_kg


def count(spec: str, data_dir: Path | None) -> dict:
    start = time.perf_counter()
    vocab = resolve_kg(spec, data_dir)
    seconds = time.perf_counter() - start
    concepts = vocab.names["code"].nunique()
    triplets = 0 if vocab.relations is None else len(vocab.relations)
    langs = vocab.names["lang"].value_counts()
    return {"kg": spec, "concepts": concepts, "names": len(vocab.names),
            "names/concept": round(len(vocab.names) / max(concepts, 1), 2), "triplets": triplets,
            "languages": ", ".join(f"{lang} {n}" for lang, n in langs.items()),
            "load_s": round(seconds, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kg", nargs="+")
    parser.add_argument("--data-dir", type=Path, default=None)
    args = parser.parse_args()
    for spec in args.kg:
        row = count(spec, args.data_dir)
        print("\t".join(f"{key}={value}" for key, value in row.items()))


if __name__ == "__main__":
    main()
