"""When two sites' local names mean the same thing: encoder cosine at or above a threshold that is
calibrated on the target vocabulary, never picked by hand.

Calibration data: pairs of preferred names of the target vocabulary. What a harmonised study
needs to match is the analyte: "Creatinine" at one site and "Kreatinin" at another mean the same
whether one site measures it in mg/dL and the other in µmol/L, and that the two went to different
concepts is exactly what the conflict sheet must show. So a positive pair is the names of two
concepts of one analyte (same component: LOINC's COMPONENT, else the words of the name before
"[" or " in "; they differ in property, specimen or method), and a negative pair is one of those
names and the name of a concept of another analyte, half of them drawn from the same class (LOINC
CLASS, OMOP domain) so that near neighbours ("Monocytes [#/volume] in Blood" for "Leukocytes
[#/volume] in Blood") are in the sample. The threshold is the lowest cosine at which
the share of positives among the pairs at or above it reaches the asked precision, with as many
negatives as positives. The value for the model that judges names (config.SAME_MEANING_MODEL, the
untrained base) on the built-in LOINC subset is shipped
(`data/harmonise/name-threshold.json`, written by `python -m codemap.review.same_meaning`);
any other model or vocabulary is calibrated when it is used.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..domains import name_analyte
from ..errors import CodemapError
from ..files import atomic_path
from ..vocab.vocabulary import Vocabulary

SHIPPED = "data/harmonise/name-threshold.json"
SAMPLE_CONCEPTS = 800  # analytes drawn for the pairs: enough for a stable value, seconds on a CPU
_CLASS_COLUMNS = ("class", "domain_id", "domain", "semantic_tag")


@dataclass(frozen=True)
class NameThreshold:
    """A calibrated same-meaning threshold and the data it was measured on."""

    value: float
    precision: float  # asked precision
    measured_precision: float  # at `value`, on the calibration pairs
    recall: float  # share of positive pairs at or above `value`
    positives: int
    negatives: int
    model: str
    vocabulary: str  # "id version"
    data: str  # how the pairs were made, in words

    def describe(self) -> str:
        return (f"{self.value:.3f} (precision {self.measured_precision:.3f} ≥ {self.precision:g}, "
                f"recall {self.recall:.3f}, on {self.positives} same-analyte and {self.negatives} "
                f"other-analyte name pairs of {self.vocabulary}, model {self.model})")


def name_pairs(vocab: Vocabulary, seed: int = 0) -> pd.DataFrame:
    """Calibration pairs (`a`, `b`, `same`) from the vocabulary's preferred names; see the module
    text. Raises CodemapError when too few analytes have two concepts."""
    rng = np.random.default_rng(seed)
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"].astype(str)))
    classes, analytes = _concept_classes(vocab), _analytes(vocab)
    by_analyte = pd.Series(list(analytes), index=list(analytes.values())).groupby(level=0).agg(list)
    shared = by_analyte[by_analyte.map(len) >= 2]
    if len(shared) < 20:
        raise CodemapError(f"{vocab.id}: too few analytes with two concepts to calibrate the "
                           f"same-meaning threshold; give --name-threshold")
    shared = shared.iloc[rng.permutation(len(shared))[:SAMPLE_CONCEPTS]]
    codes = list(names)
    rows = []
    for i, (analyte, members) in enumerate(shared.items()):
        a, b = (members[k] for k in rng.choice(len(members), 2, replace=False))
        rows.append((names[a], names[b], True))
        others = [c for c in codes if analytes[c] != analyte]
        same_class = [c for c in others if classes.get(c, "") == classes.get(a, "")]
        pool = same_class if (i % 2 == 0 and same_class) else others
        rows.append((names[a], names[pool[rng.integers(len(pool))]], False))
    return pd.DataFrame(rows, columns=["a", "b", "same"])


def _concept_classes(vocab: Vocabulary) -> dict:
    column = next((c for c in _CLASS_COLUMNS if c in vocab.concepts.columns), None)
    if column is None:
        return {}
    return dict(zip(vocab.concepts["code"], vocab.concepts[column].astype(str)))



def _analytes(vocab: Vocabulary) -> dict:
    concepts = vocab.concepts
    if "component" in concepts.columns:
        return dict(zip(concepts["code"], concepts["component"].astype(str).str.lower()))
    return {code: name_analyte(str(name)).lower()
            for code, name in zip(concepts["code"], concepts["name"])}


def calibrate(encoder, vocab: Vocabulary, precision: float = 0.95, model: str = "") -> NameThreshold:
    """The lowest cosine whose precision on `name_pairs(vocab)` is at least `precision`."""
    pairs = name_pairs(vocab)
    a = encoder.encode(pairs["a"].tolist())
    b = encoder.encode(pairs["b"].tolist())
    cosine = np.einsum("ij,ij->i", a, b)
    same = pairs["same"].to_numpy()
    order = np.argsort(-cosine, kind="stable")
    hits = np.cumsum(same[order])
    shares = hits / np.arange(1, len(order) + 1)
    # Scanning from the top, the last cut that still holds the precision; a threshold must sit
    # at a score, so ties are never split.
    ok = np.nonzero(shares >= precision)[0]
    if len(ok) == 0:
        raise CodemapError(f"no encoder threshold reaches precision {precision:g} on {vocab.id}'s "
                           f"name pairs; lower --name-precision or give --name-threshold")
    cut = ok[-1]
    value = float(cosine[order[cut]])
    above = cosine >= value
    return NameThreshold(
        value=round(value, 4), precision=precision,
        measured_precision=round(float(same[above].mean()), 4),
        recall=round(float(above[same].mean()), 4), positives=int(same.sum()),
        negatives=int((~same).sum()), model=model, vocabulary=f"{vocab.id} {vocab.version}",
        data=("preferred names of two concepts of one analyte vs of two analytes (half from "
              f"the same class), {SAMPLE_CONCEPTS} analytes at most, seed 0"))


def shipped_threshold(model: str, vocab: Vocabulary, precision: float) -> NameThreshold | None:
    """The shipped calibration when it was made for this model, vocabulary and precision."""
    with resources.as_file(resources.files("codemap") / SHIPPED) as path:
        if not path.exists():
            return None
        stored = NameThreshold(**json.loads(path.read_text(encoding="utf-8")))
    if (stored.model, stored.vocabulary, stored.precision) == (model, f"{vocab.id} {vocab.version}",
                                                               precision):
        return stored
    return None


def write_threshold(threshold: NameThreshold, path: Path) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(asdict(threshold), indent=1) + "\n", encoding="utf-8")
    return path


def similar_pairs(texts_a: list[str], texts_b: list[str], vectors_a: np.ndarray,
                  vectors_b: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """(i, j, cosine) of every pair across two lists at or above `threshold`."""
    if not len(texts_a) or not len(texts_b):
        return []
    cosine = vectors_a @ vectors_b.T
    rows, cols = np.nonzero(cosine >= threshold)
    return [(int(i), int(j), float(cosine[i, j])) for i, j in zip(rows, cols)]


if __name__ == "__main__":  # re-make the shipped calibration: SAME_MEANING_MODEL, built-in LOINC
    from ..config import SAME_MEANING_MODEL, EncoderConfig
    from ..embed import Encoder
    from ..vocab.vocabulary import builtin_loinc

    found = calibrate(Encoder.load(EncoderConfig(model=SAME_MEANING_MODEL)), builtin_loinc(), 0.95,
                      model=SAME_MEANING_MODEL)
    print(write_threshold(found, Path(__file__).resolve().parents[1] / SHIPPED), found.describe())
