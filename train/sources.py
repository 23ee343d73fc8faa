"""Small loaders that turn the public files in a data folder (the project's `shared/data` layout)
into `codemap.vocab.Vocabulary` objects with relations, for training.

They stand in until the vocabulary store imports these sources; `resolve_kg` already tries the
store (`codemap.vocab.load_target`) for any name it does not know itself.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pandas as pd

from codemap.errors import CodemapError
from codemap.readers import read_table
from codemap.store import VocabStore
from codemap.store.importers import ImportOptions
from codemap.vocab import Vocabulary, load_target

# LOINC's six axes in the German linguistic variant, as relation labels "has_<axis>".
LOINC_AXES = ["COMPONENT", "PROPERTY", "TIME_ASPCT", "SYSTEM", "SCALE_TYP", "METHOD_TYP"]


def load_loinc_public(data_dir: Path, german: bool = True) -> Vocabulary:
    """LOINC codes with English short names (loinc-shortnames), English long common names
    (loinc-top2000), German long names (loinc-de-linguistic-variant); the German axes (and the
    English COMPONENT from loinc-core-2col) become part concepts linked by has_<axis> relations.

    `german=False` ("loinc-en"): English names only; the one English axis, COMPONENT, becomes
    the part concepts (has_component), so every name and relation is English.
    """
    if not german:
        return _loinc_english(data_dir)
    english = _loinc_english_names(data_dir)
    german = _read(data_dir / "loinc-de-linguistic-variant" / "deDE15LinguisticVariant.csv")
    names = [english,
             german[["LOINC_NUM", "LONG_COMMON_NAME"]].set_axis(["code", "name"], axis=1)
             .assign(lang="de", name_type="preferred")]
    relations = []
    for axis in LOINC_AXES:
        part = german[["LOINC_NUM", axis]].set_axis(["code", "name"], axis=1)
        part = part[part["name"].str.strip() != ""]
        part_code = axis.lower() + ":" + part["name"].str.lower()
        names.append(pd.DataFrame({"code": part_code, "name": part["name"], "lang": "de",
                                   "name_type": "part"}))
        relations.append(pd.DataFrame({"head": part["code"], "relation": "has_" + axis.lower(),
                                       "tail": part_code}))
    core = data_dir / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv"
    if core.exists():
        # English component names join the German part concept of the same LOINC code, so a part
        # concept carries both languages.
        english = _read(core).set_axis(["code", "english"], axis=1)
        joined = english.merge(german[["LOINC_NUM", "COMPONENT"]], left_on="code",
                               right_on="LOINC_NUM")
        joined = joined[(joined["COMPONENT"].str.strip() != "") & (joined["english"].str.strip() != "")]
        names.append(pd.DataFrame({"code": "component:" + joined["COMPONENT"].str.lower(),
                                   "name": joined["english"], "lang": "en", "name_type": "part"}))
    names_frame = pd.concat(names, ignore_index=True)
    names_frame = names_frame[names_frame["name"].str.strip() != ""].drop_duplicates(["code", "name"])
    concepts = names_frame.drop_duplicates("code")[["code", "name"]]
    return Vocabulary(id="LOINC", version="public files", concepts=concepts,
                      names=names_frame[["code", "name", "name_type", "lang"]],
                      relations=pd.concat(relations, ignore_index=True).drop_duplicates(),
                      source=str(data_dir))


def _loinc_english_names(data_dir: Path) -> pd.DataFrame:
    """English short names (loinc-shortnames) and Top-2000 long common and short names."""
    short = _read(data_dir / "loinc-shortnames" / "loinc_shortnames.tsv", header=False)
    short.columns = ["code", "name"]
    top = pd.concat([_read(p) for p in sorted((data_dir / "loinc-top2000").glob("*.csv"))])
    top = top.iloc[:, :3]
    top.columns = ["code", "name", "short"]
    return pd.concat([short.assign(name_type="short"),
                      top[["code", "name"]].assign(name_type="preferred"),
                      top[["code", "short"]].rename(columns={"short": "name"}).assign(name_type="short")],
                     ignore_index=True).assign(lang="en")


def _loinc_english(data_dir: Path) -> Vocabulary:
    english = _loinc_english_names(data_dir)
    component = _read(data_dir / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv")
    component = component.set_axis(["code", "name"], axis=1)
    component = component[component["code"].isin(set(english["code"]))
                          & (component["name"].str.strip() != "")]
    part_code = "component:" + component["name"].str.lower()
    names = pd.concat([english, pd.DataFrame({"code": part_code, "name": component["name"],
                                              "name_type": "part", "lang": "en"})], ignore_index=True)
    names = names[names["name"].str.strip() != ""].drop_duplicates(["code", "name"])
    relations = pd.DataFrame({"head": component["code"], "relation": "has_component",
                              "tail": part_code}).drop_duplicates()
    return Vocabulary(id="LOINC", version="public files, English", concepts=names.drop_duplicates("code")[["code", "name"]],
                      names=names[["code", "name", "name_type", "lang"]], relations=relations,
                      source=str(data_dir))


def load_icd10cm() -> Vocabulary:
    """ICD-10-CM: the CMS tabular XML that the `simple-icd-10-cm` package bundles, read by the
    vocabulary store's icd10cm importer (into a throw-away store): titles, inclusion terms as
    synonyms, is_a to the parent; 7th-character extensions are not expanded into codes.
    (Hold evaluation terms out with --holdout.)"""
    try:
        import simple_icd_10_cm
    except ImportError:
        raise CodemapError("--kg icd10cm needs the simple-icd-10-cm package: "
                           "pip install 'codemap[train]' (or import a tabular XML with "
                           "`codemap vocab import icd10cm FILE` and use --kg ICD10CM)") from None
    xml = sorted((Path(simple_icd_10_cm.__file__).parent / "data").glob("*tabular*.xml"))
    if not xml:
        raise CodemapError("simple-icd-10-cm ships no tabular XML; import one with "
                           "`codemap vocab import icd10cm FILE` and use --kg ICD10CM")
    with tempfile.TemporaryDirectory(prefix="codemap-icd10cm-") as folder:
        store = VocabStore(folder)
        store.import_files("icd10cm", xml[-1], ImportOptions())
        return store.load("ICD10CM")


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


PUBLIC_SOURCES = {
    "loinc": lambda data_dir: load_loinc_public(data_dir),
    "loinc-en": lambda data_dir: load_loinc_public(data_dir, german=False),
    "hpo": lambda data_dir: load_obo(data_dir / "hpo-2015" / "hp.obo", "HPO"),
    "do": lambda data_dir: load_obo(_one(data_dir / "disease-ontology", "doid*.obo"), "DO"),
}


def resolve_kg(spec: str, data_dir: Path | None) -> Vocabulary:
    """`--kg` value → Vocabulary: an .obo file, a public source name read from `data_dir`
    (loinc, loinc-en, hpo, do) or a package (icd10cm), or anything `codemap.vocab.load_target` knows (store, built-in, file).

    Raises CodemapError when it is none of these.
    """
    path = Path(spec)
    if path.suffix == ".obo":
        if not path.exists():
            raise CodemapError(f"--kg {spec}: file not found")
        return load_obo(path)
    if spec.lower() == "icd10cm":  # from a package, no data folder needed
        return load_icd10cm()
    loader = PUBLIC_SOURCES.get(spec.lower())
    if loader is not None and data_dir is not None:
        if not Path(data_dir).is_dir():
            raise CodemapError(f"--data-dir {data_dir}: not a folder")
        return loader(Path(data_dir))
    return load_target(spec)


def _one(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if not found:
        raise CodemapError(f"{folder}: no {pattern} file; --data-dir must hold the public data folders")
    return found[-1]


def _read(path: Path, header: bool = True) -> pd.DataFrame:
    if not path.exists():
        raise CodemapError(f"{path}: missing; --data-dir must hold the public data folders")
    if header:
        return read_table(path)
    return pd.read_csv(path, sep="\t", header=None, dtype=str, keep_default_na=False)
