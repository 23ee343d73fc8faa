"""LOINC from the public files of the data folder: English short and long names, the German
linguistic variant, and the axes as part concepts (has_<axis>)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from codemap.vocab import Vocabulary

from .files import read_data as _read

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


SOURCES = {
    "loinc": lambda data_dir: load_loinc_public(data_dir),
    "loinc-en": lambda data_dir: load_loinc_public(data_dir, german=False),
}
