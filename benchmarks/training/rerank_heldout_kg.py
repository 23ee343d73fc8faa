"""Sanity check of a re-ranker on held-out knowledge-graph groups built as in training (anchors its
run never drew), with hard and with random negatives, plus a few obvious pairs.

    python benchmarks/training/rerank_heldout_kg.py runs/reranker/model
"""
import sys
from pathlib import Path
import numpy as np

from codemap.rank import CrossEncoder
from codemap.config import EncoderConfig, default_cache_dir
from codemap.embed import Encoder
from codemap.train.config import TrainConfig
from codemap.train.loop import load_graph
from codemap.train.rerank import plan_anchors, mine_negatives, step_groups, anchor_rows
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


M = ARGS[0]
ce = CrossEncoder.load(M, device="cpu")
print("max_length", ce.max_length, "tok", type(ce.tokenizer).__name__, ce.tokenizer.model_max_length)
cases = [("Potassium", ["Potassium [Moles/volume] in Serum or Plasma", "Sodium [Moles/volume] in Serum or Plasma",
                        "Potassium [Moles/volume] in Urine", "Glucose [Mass/volume] in Blood"]),
         ("Hemoglobin A1c", ["Hemoglobin A1c/Hemoglobin.total in Blood", "Hemoglobin [Mass/volume] in Blood", "Creatinine [Mass/volume] in Serum or Plasma"]),
         ("Type 2 diabetes", ["Type 2 diabetes mellitus without complications", "Type 1 diabetes mellitus without complications", "Essential (primary) hypertension"])]
for q, cands in cases:
    s = ce.score([q]*len(cands), cands)
    for c, v in sorted(zip(cands, s), key=lambda t: -t[1]): print(f"  {q!r:20} {v:+.3f} {c}")
meta = ce.meta; tc = meta["train_config"]
cfg = TrainConfig(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in tc.items()})
graph = load_graph(cfg)
train_anchors = set(plan_anchors(graph, tc["steps"], tc["rerank_batch"], tc["seed"]).ravel().tolist())
rows = anchor_rows(graph)
rng = np.random.default_rng(123)
held = np.array([r for r in rng.choice(rows, 600, replace=False) if r not in train_anchors][:200])
miner = Encoder.load(EncoderConfig(model="default", device="cpu"), default_cache_dir())
mined = mine_negatives(graph, held, miner, tc["rerank_pool"], default_cache_dir())
for label, negs in [("hard", mined), ("random", {})]:
    g = step_groups(graph, held, negs, 3, 999, 1)
    size = len(g.candidates[0])
    s = ce.score([a for a in g.anchors for _ in range(size)], [c for grp in g.candidates for c in grp]).reshape(-1, size)
    print(label, "held-out groups", len(held), "positive wins", (s.argmax(1) == 0).mean(), "chance", 1/size)
    if label == "hard":
        for i in range(5): print("  ", g.anchors[i], "|", [(c[:50], round(float(v), 2)) for c, v in zip(g.candidates[i], s[i])])
