"""Loaders that turn public files (the project's `shared/data` layout) and data packages into
`codemap.vocab.Vocabulary` objects with relations, for the training graph (`--kg NAME`).

One module per source family; each exports `SOURCES`, a dict of `--kg` name → loader(data_dir).
Names no module knows go to `codemap.vocab.load_target` (vocabulary store, built-in, table file).
"""
from __future__ import annotations

from pathlib import Path

from codemap.errors import CodemapError
from codemap.vocab import Vocabulary, load_target

from . import abbreviations, drugs, icd10, loinc, obo
from .icd10 import load_icd10, load_icd10cm, load_icd10pcs
from .loinc import load_loinc_public
from .obo import load_obo

# --kg name → loader(data_dir); every loader reads only `data_dir` or installed packages.
PUBLIC_SOURCES = {**loinc.SOURCES, **obo.SOURCES, **icd10.SOURCES, **drugs.SOURCES}
# loaders that need no data folder (the data ships in a package)
PACKAGE_SOURCES = {**icd10.PACKAGE_SOURCES, **obo.PACKAGE_SOURCES, **abbreviations.PACKAGE_SOURCES}

__all__ = ["PUBLIC_SOURCES", "PACKAGE_SOURCES", "resolve_kg", "load_obo", "load_loinc_public",
           "load_icd10cm", "load_icd10", "load_icd10pcs"]


def resolve_kg(spec: str, data_dir: Path | None) -> Vocabulary:
    """`--kg` value → Vocabulary: an .obo file, a public source name read from `data_dir`
    (loinc, loinc-en, hpo-2015, do, atc, drugcentral, drugs, omop-drugs) or a package (icd10cm,
    icd10, icd10pcs, hpo, abbrev), or anything `codemap.vocab.load_target` knows (store,
    built-in, file).

    Raises CodemapError when it is none of these.
    """
    path = Path(spec)
    if path.suffix == ".obo":
        if not path.exists():
            raise CodemapError(f"--kg {spec}: file not found")
        return load_obo(path)
    package = PACKAGE_SOURCES.get(spec.lower())
    if package is not None:  # the data ships in a package: no data folder needed
        return package(data_dir)
    loader = PUBLIC_SOURCES.get(spec.lower())
    if loader is not None and data_dir is not None:
        if not Path(data_dir).is_dir():
            raise CodemapError(f"--data-dir {data_dir}: not a folder")
        return loader(Path(data_dir))
    return load_target(spec)
