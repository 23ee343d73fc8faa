"""What a row states, kept (issue #52): each set ranked by the encoder alone, the lexical index
alone and the default ranking, with what the default's first candidate does with the axes the row
states.

Per set and method: acc@1, acc@10; for the default also the rows that state a specimen (in the
text or a specimen column, read by the lab domain) and the share of them whose first candidate
has that specimen, and the top candidates with their explanations (raw, for the confidence fit
and for reading errors).

    python benchmarks/quality/stated_axes.py OUT.json --sets labs_nofluid,german_labs
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods
from codemap.evaluate.metrics import gold_ranks, score_ranks
from codemap.domains.lab.part_translation import held_out

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets
from sets import load  # noqa: E402

KEEP = 10  # candidates kept per row in the raw file


def ranked(name: str) -> dict:
    """The set's three rankings: scores, and the default's top candidates per row."""
    started = time.perf_counter()
    g = load(name)
    held_out(set().union(*g.gold))  # the German sets: the part lexicon learns without their codes
    drugs = g.kind == "drug"
    methods = eval_methods(g.base, drugs=drugs)
    out = {"set": name, "kind": g.kind, "n": len(g.gold), "methods": {}}
    for label, key in (("encoder", "encoder"), ("lexical", "lexical"),
                       ("default", DEFAULT_METHOD[drugs])):
        found = g.rank(methods[key])
        ranks = gold_ranks(found, g.gold)
        out["methods"][label] = {**score_ranks(ranks).as_row(), "ranks": ranks}
        if label == "default":
            out["rows"] = _rows(found, g)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def _rows(found, g) -> list[dict]:
    rows = []
    for q, group in found.sort_values(["query", "rank"]).groupby("query", sort=True):
        top = group.head(KEEP)
        rows.append({"text": g.rows[q]["text"], "specimen": g.rows[q].get("specimen", ""),
                     "unit": g.rows[q].get("unit", ""), "gold": sorted(g.gold[q]),
                     "codes": top["target_code"].tolist(), "names": top["target_name"].tolist(),
                     "scores": [float(s) for s in top["score"]],
                     "encoder": [None if v is None else float(v) for v in top["encoder_score"]],
                     "lexical": [None if v is None else float(v) for v in top["lexical_score"]],
                     "explanations": top["explanation"].tolist()})
    return rows


def _switch(args) -> None:
    """The pieces measured on and off (benchmarks/results/stated-axes/RULE.md), set as asked."""
    from codemap.domains.drug import agreement
    from codemap.domains.lab import columns
    from codemap.rank import hybrid

    if args.binding is not None:
        columns.BINDING = frozenset() if args.binding == "none" else frozenset(args.binding.split(","))
    if args.families is not None:
        hybrid.FAMILY_SEEDS = args.families
    if args.drug_form_tier is not None:
        agreement.TIER_FORM_CONTRADICT = args.drug_form_tier
    if args.without_specimen_forms:
        specimen_forms_off(args.without_specimen_forms.split(","))


def specimen_forms_off(pieces: list[str]) -> None:
    """Turn off pieces of the specimen-forms reading (benchmarks/results/specimen-words/RULE.md):
    "words" (learned from other languages, with their hour words), "compounds", "cuts"."""
    from codemap.domains.lab import loinc
    from codemap.domains.lab.specimens import Specimen

    unknown = set(pieces) - {"words", "compounds", "cuts"}
    if unknown:
        raise SystemExit(f"unknown specimen-form pieces: {sorted(unknown)}")
    if "words" in pieces:
        loinc.foreign_spellings, loinc.hour_words = (lambda: []), (lambda: frozenset())
    if "compounds" in pieces:
        loinc.split_compounds = lambda words, heads, analytes: words
    if "cuts" in pieces:
        loinc._cut_specimen = lambda text: Specimen()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", required=True, help="comma-separated names of benchmarks/sets.py")
    parser.add_argument("--binding", help="comma-separated lab scorer names whose contradiction "
                        "binds (columns.BINDING; default: as shipped; 'none' for none)")
    parser.add_argument("--families", type=int, help="hybrid.FAMILY_SEEDS (0: no family pool)")
    parser.add_argument("--drug-form-tier", type=int, help="agreement.TIER_FORM_CONTRADICT")
    parser.add_argument("--calibration", type=Path,
                        help="a calibration file (codemap calibrate -o) the confidence report "
                             "uses for its domain instead of the shipped one")
    parser.add_argument("--without-specimen-forms", default="",
                        help="comma-separated pieces of the specimen-forms reading to turn off: "
                             "words, compounds, cuts")
    args = parser.parse_args(argv)
    _switch(args)
    results = []
    for name in args.sets.split(","):
        result = ranked(name)
        results.append(result)
        m = result["methods"]
        print(f"{name:28} n={result['n']:4}  " + "  ".join(
            f"{k} {v['acc@1']:.3f}/{v['acc@10']:.3f}" for k, v in m.items())
              + f"  ({result['seconds']} s)", flush=True)
    for row in confidence_report(results, args.calibration):
        print(json.dumps(row), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    return 0



def candidate_frame(result: dict):
    """A ranked set's kept candidates as rank_hybrid's frame (what a calibrator reads), each
    with whether it is a gold code ("right")."""
    import pandas as pd

    return pd.DataFrame([{"query": q, "rank": k + 1, "score": row["scores"][k],
                          "encoder_score": row["encoder"][k], "lexical_score": row["lexical"][k],
                          "explanation": row["explanations"][k], "code": row["codes"][k],
                          "right": row["codes"][k] in row["gold"]}
                         for q, row in enumerate(result["rows"]) for k in range(len(row["codes"]))])


def confidence_report(results: list[dict], calibration: Path | None = None) -> list[dict]:
    """Per set of a lab or drug kind: the shipped calibration (the target's domain's) applied to
    the default ranking's candidates, read against the gold: AUROC of the first candidate's
    confidence (right vs wrong), the share of rows suggested pre-approve (as map suggests it)
    with their precision, and the share of rows suggested no_match whose first candidate is
    right. Every gold code is in the target here (no row hidden). `calibration`: a file used for
    its domain instead of the shipped calibration."""
    import pandas as pd

    from codemap.decide.calibrate import top_auroc
    from codemap.decide.confidence import Calibrator, shipped_calibrators
    from codemap.decide.learned_eval import suggested_shares

    by_domain = {c.domain: c for c in shipped_calibrators()}
    if calibration is not None:
        chosen = Calibrator.load(calibration)
        by_domain[chosen.domain] = chosen
    out = []
    for result in results:
        calibrator = by_domain.get(result["kind"])
        if calibrator is None or "rows" not in result:
            continue
        frame = candidate_frame(result)
        frame["confidence"] = calibrator.predict(frame)
        top = frame[frame["rank"] == 1]
        right = top["right"].to_numpy(bool)
        shares = suggested_shares(calibrator, top["confidence"].to_numpy(), right)
        rounded = lambda x: None if x is None else round(x, 4)
        out.append({"set": result["set"], "kind": result["kind"], "n": len(top),
                    "auroc": top_auroc(top["confidence"].to_numpy(), right.astype(int)),
                    "threshold_95": shares["threshold"],
                    **{key: rounded(shares[key]) for key in (
                        "preapproved_share", "preapproved_precision", "no_match_share",
                        "no_match_right_share")},
                    "top1_contradicted_over_half": int(((top["explanation"].str.contains("✘"))
                                                        & (top["confidence"] > 0.5)).sum())})
    return out


if __name__ == "__main__":
    raise SystemExit(main())
