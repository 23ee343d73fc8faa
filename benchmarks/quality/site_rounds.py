"""Reviews teach the index, measured: site B's list mapped without and with site A's approvals
as local names (codemap.vocab.local_names), on real lists with gold codes.

Site A's scripted review approves its gold code (the first, where twins are both right) for
every row it has, through the real mapping memory (MappingMemory.store → local_names). Site B's
rows fall in three groups, reported apart: an exact repeat of a text A approved (the memory's
pre-fill handles those by code and text already; here only the text matches), a concept A
approved under another text, and a concept A never had. Nothing is fitted here: the local names
are the only change between the two runs of a pair, and every method row (encoder alone, lexical
alone, the default) is measured both ways. The confidence is the run's own (the shipped
calibration where one fits, else the target's pseudo-query one); note that the shipped lab
calibration was fitted on the dev labels used here, so its AUROC is a before/after comparison,
not an out-of-sample figure.

    python benchmarks/quality/site_rounds.py OUT.json [PAIR-SUBSTRING]   # the dev pairs
    python benchmarks/quality/site_rounds.py OUT.json fresh              # the deciding pairs

Pairs (site A → site B): PAIRS below. Results: benchmarks/results/site-rounds/,
docs/experiments/2026-11-28-site-rounds.md.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, usage

from sets import DATA, FRESH, SETS  # noqa: E402
from usage import positional  # noqa: E402
from codemap.config import EvalConfig, MapConfig  # noqa: E402
from codemap.decide.calibrate import precision_curve  # noqa: E402
from codemap.decide.learned_eval import auroc, top_confidence  # noqa: E402
from codemap.engines.local import first_stage_confidence  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries, text_key  # noqa: E402
from codemap.evaluate.metrics import gold_ranks  # noqa: E402
from codemap.files import sha256_text  # noqa: E402
from codemap.rank.candidates import threshold_at  # noqa: E402
from codemap.read.normalize import source_key  # noqa: E402
from codemap.review.memory import MappingMemory  # noqa: E402

ARGS = positional(__doc__, 1)
PRECISION = 0.95

# (pair name, site A's set, site B's set, how B is drawn): a set, or ("half", set, 0 | 1): the
# rows of a set split in two by a fixed hash of the row's text (the two halves of one list, as
# two sites of one hospital group would hold them).
PAIRS = [
    ("mimic_labels→german_labels", "labs_fluid", "german_labs"),
    ("german_labels→mimic_labels", "german_labs", "labs_fluid"),
    ("mimic_labels half→half", ("half", "labs_fluid", 0), ("half", "labs_fluid", 1)),
    ("german_labels half→half", ("half", "german_labs", 0), ("half", "german_labs", 1)),
    ("drug_strings half→half", ("half", "drugs", 0), ("half", "drugs", 1)),
    ("german_labels→hospital_labels_de", "german_labs", "hospital_labels_de"),
]
# The deciding pairs, run once under benchmarks/results/site-rounds/RULE.md: each dev list's
# approvals, then its fresh part as the next list of that site.
FRESH_PAIRS = [
    ("german_labels dev→fresh", "german_labs", "german_labs_fresh"),
    ("mimic_labels dev→fresh", "labs_nofluid", "labs_nofluid_fresh"),
    ("drug_strings dev→fresh", "drugs", "drugs_fresh"),
]
EXTRA_SETS = {"hospital_labels_de": (DATA / "hospital_labels_de.tsv", "LOINC", "loinc_code", ("label",)),
              **FRESH}


def site_list(spec, folder: Path) -> tuple[Path, str, str, tuple]:
    """(gold file, target, gold column, text columns) of a site: a set, or half of one."""
    if isinstance(spec, str):
        return {**SETS, **EXTRA_SETS}[spec]
    _, name, half = spec
    gold, target, gold_col, text_cols = SETS[name]
    frame = pd.read_csv(gold, sep="\t", dtype=str, keep_default_na=False)
    text = frame[text_cols[0]] if text_cols else frame.iloc[:, 1]
    keep = text.map(lambda t: int(sha256_text(source_key(t))[:8], 16) % 2 == half)
    path = folder / f"{name}-half{half}.tsv"
    frame[keep].to_csv(path, sep="\t", index=False)
    return path, target, gold_col, text_cols


def approvals(g) -> pd.DataFrame:
    """Site A's scripted review: each row's (first) gold code approved, as apply resolves it."""
    return pd.DataFrame([{"source_code": str(i), "source_text": row["text"],
                          "target_code": sorted(codes)[0], "target_name": "", "decision": "approved",
                          "equivalence": "equal", "reviewer": "site-a-script", "comment": "",
                          "automatic": False} for i, (row, codes) in enumerate(zip(g.rows, g.gold))])


def groups(b, approved: pd.DataFrame) -> np.ndarray:
    """Each B row's group: repeat (A approved this very text), seen (A approved its concept
    under another text) or unseen."""
    keys = set(approved["source_text"].map(source_key))
    codes = set(approved["target_code"])
    return np.array(["repeat" if source_key(row["text"]) in keys else
                     "seen" if gold & codes else "unseen" for row, gold in zip(b.rows, b.gold)])


def measure_pair(name: str, spec_a, spec_b, folder: Path) -> dict:
    clock = time.perf_counter()
    a = gold_queries(EvalConfig(*site_list(spec_a, folder), progress=False))
    b = gold_queries(EvalConfig(*site_list(spec_b, folder), progress=False))
    reviewed = approvals(a)
    memory_path = folder / f"{name.replace('→', '-to-')}.db"
    memory_path.unlink(missing_ok=True)
    with MappingMemory(memory_path) as memory:
        memory.store(reviewed, b.vocab, source="site-a.xlsx", site="site-a")
        names, flagged = memory.local_names(b.vocab.id).usable(b.vocab)
    group = groups(b, reviewed)
    drugs = b.kind == "drug"
    methods = eval_methods(b.base, drugs=drugs)
    default = DEFAULT_METHOD[drugs]
    report = {"pair": name, "rows_a": len(a.rows), "rows_b": len(b.rows),
              "local_names": len(names), "flagged": len(flagged),
              "groups": {k: int((group == k).sum()) for k in ("repeat", "seen", "unseen")},
              "methods": {}}
    for method in ("encoder", "lexical", default):
        rank = methods[method]
        before = b.rank(rank)
        ranking, vectors, rows = b.prepared[text_key(rank)]
        ranking = ranking.with_settings(rank)
        after = ranking.with_local_names(names).rank(vectors, rows, hub=b._hub(rank))
        runs = [("without", before), ("with", after)]
        row = {}
        for label, found in runs:
            ranks = np.array(gold_ranks(found, b.gold), dtype=object)
            right = np.array([r == 1 for r in ranks])
            row[label] = {"acc1": round(float(right.mean()), 4),
                          "acc10": round(float(np.mean([r is not None and r <= 10 for r in ranks])), 4),
                          **{f"acc1_{k}": (round(float(right[group == k].mean()), 4)
                                           if (group == k).any() else None)
                             for k in ("repeat", "seen", "unseen")}}
            if method == default:
                row[label].update(_confidence(b, ranking, found, ranks, right, group))
        report["methods"][method] = row
    report["seconds"] = round(time.perf_counter() - clock, 1)
    return report


def _confidence(b, ranking, found, ranks, right, group) -> dict:
    """AUROC of the top confidence, the share pre-approvable at 95 % precision on this list, and
    what the run's own threshold pre-approves; for all rows and for rows A never had."""
    calibrator, described = first_stage_confidence(
        MapConfig(source=Path("-"), target=b.config.target, cache_dir=b.config.cache_dir), ranking)
    if calibrator is None:
        return {}
    scored = found.assign(confidence=calibrator.predict(found))
    conf = top_confidence(scored, len(b.gold), "confidence")
    out = {"confidence": described[:80], "auroc": _round(auroc(conf, list(ranks)))}
    fresh = group != "repeat"
    out["auroc_not_repeat"] = _round(auroc(conf[fresh], list(ranks[fresh])))
    at = threshold_at(precision_curve(conf, right.astype(float)), PRECISION)
    out["share_at_95"] = round(float(np.mean(conf >= at)), 4) if at is not None else 0.0
    shipped = calibrator.threshold_for(PRECISION)
    if shipped is not None:
        chosen = conf >= shipped
        out["pre_approved"] = int(chosen.sum())
        out["pre_approved_precision"] = _round(float(right[chosen].mean()) if chosen.any() else None)
    return out


def _round(x):
    return None if x is None else round(float(x), 4)


def main(out: Path, only: str = "") -> None:
    folder = Path(tempfile.mkdtemp(prefix="site-rounds-"))  # halves and memories: scratch
    folder.mkdir(parents=True, exist_ok=True)
    results = []
    for name, spec_a, spec_b in (FRESH_PAIRS if only == "fresh" else PAIRS):
        if only and only != "fresh" and only not in name:
            continue
        results.append(measure_pair(name, spec_a, spec_b, folder))
        print(json.dumps(results[-1]), flush=True)
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main(Path(ARGS[0]), *ARGS[1:2])
