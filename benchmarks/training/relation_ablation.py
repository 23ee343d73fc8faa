"""The relation-loss ablation of issue #22: runs of one preset with and without the relation loss,
compared at the same step against their untrained base: encoder acc@1 on the pre-registered dev
and fresh sets of train_decide (the multilingual runs on the cross-lingual dev sets too; the
encoder row of `codemap eval`, paired per query) and the Spearman correlation of cosine with
human ratings (MayoSRS, UMNSRS).

    python benchmarks/training/relation_ablation.py --alias default --ratings ../shared/data/term-similarity \\
        with=RUN_WITH without=RUN_WITHOUT -o benchmarks/results/train-coder-long/relation-ablation.json

Each RUN is a run folder whose newest checkpoint is scored (a LoRA adapter, merged into the base).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from train_decide import BASES, FRESH, dev_sets, english_loinc, encoder_hits, paired  # benchmarks/ on sys.path

from codemap.config import EncoderConfig, default_cache_dir
from codemap.embed import Encoder
from codemap.embed.adapters import materialise
from codemap.embed.models import resolve_model
from codemap.evaluate.similarity import score_similarity
from codemap.train.ship import ship

RATINGS = ("MayoSRS.csv", "umnsrs-sim.txt", "umnsrs-rel.txt")


def similarity(model: str, ratings: Path, cache: Path) -> dict[str, float]:
    encoder = Encoder.load(EncoderConfig(model=model, device="cpu"), cache)
    return {Path(name).stem: round(score_similarity(encoder, ratings / name).spearman, 3)
            for name in RATINGS}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="LABEL=RUN_FOLDER")
    parser.add_argument("--alias", choices=sorted(BASES), default="default")
    parser.add_argument("--ratings", type=Path, required=True, help="folder of the rating files")
    parser.add_argument("-o", "--out", type=Path, required=True)
    args = parser.parse_args(argv)
    cache = default_cache_dir()
    base = BASES[args.alias]
    with tempfile.TemporaryDirectory(prefix="codemap-ablation-") as tmp:
        tmp = Path(tmp)
        english = english_loinc(tmp)
        models = {"base": base}
        steps = {}
        for label, run in (item.split("=", 1) for item in args.runs):
            shipped = ship(Path(run), label, out_root=tmp / "shipped")
            steps[label] = json.loads((shipped / "codemap.json").read_text())["trained"]
            models[label] = str(materialise(shipped, resolve_model(base).path, tmp / label))
        hits = {label: {"dev": encoder_hits(model, dev_sets(args.alias), cache, english),
                        "fresh": encoder_hits(model, FRESH, cache, english)}
                for label, model in models.items()}
        report = {"alias": args.alias, "runs": steps,
                  "similarity": {label: similarity(model, args.ratings, cache)
                                 for label, model in models.items()},
                  "against_base": {label: {part: paired(hits["base"][part], hits[label][part])
                                           for part in ("dev", "fresh")}
                                   for label in models if label != "base"}}
        labels = [label for label in models if label != "base"]
        if len(labels) == 2:  # the two runs against each other, query by query
            first, second = labels
            report[f"{first}_vs_{second}"] = {part: paired(hits[second][part], hits[first][part])
                                              for part in ("dev", "fresh")}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "runs"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
