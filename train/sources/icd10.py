"""ICD-10 families for the training graph."""
from __future__ import annotations

import tempfile
from pathlib import Path

from codemap.errors import CodemapError
from codemap.vocab import ImportOptions, VocabStore
from codemap.vocab import Vocabulary


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
