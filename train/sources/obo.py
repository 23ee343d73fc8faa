"""OBO ontologies (HPO, Disease Ontology…) for the training graph."""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from codemap.errors import CodemapError
from codemap.vocab import Vocabulary

from .files import one_file

_OBO_LINE = re.compile(r'^(id|name|synonym|is_a|is_obsolete): (?:"([^"]*)"|(\S+))?(.*)$')


def load_obo(path: Path, vocab_id: str | None = None) -> Vocabulary:
    """An OBO ontology (HPO, Disease Ontology…): each [Term]'s name and synonyms, is_a links.
    Obsolete terms are skipped."""
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
            current["names"].append((quoted, "synonym"))
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


SOURCES = {
    "hpo": lambda data_dir: load_obo(data_dir / "hpo-2015" / "hp.obo", "HPO"),
    "do": lambda data_dir: load_obo(one_file(data_dir / "disease-ontology", "doid*.obo"), "DO"),
}
