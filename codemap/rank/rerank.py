"""Re-ranking: a cross-encoder (trained by `codemap train-reranker`) re-scores each row's top
candidates by reading the source text and the candidate's name together.

The bi-encoder and lexical scores compare two vectors made apart; a cross-encoder attends across
the pair, so it can weigh "urine" against "serum" or a missing qualifier. It is too slow to score
every concept, so it only re-orders the top `top` candidates of the existing ranking: their order
is replaced by the cross-encoder's logit (ties keep the old order); candidates below `top` keep
their ranks. The evidence scorers' effect survives only through which candidates reach the top.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import CodemapError

log = logging.getLogger(__name__)

RERANKER_FILE = "reranker.json"  # codemap's metadata beside the Hugging Face files


def pair_length(term_length: int) -> int:
    """Token budget of a (query, candidate) pair: two terms and the separators."""
    return 2 * term_length + 3


@dataclass
class CrossEncoder:
    """A sequence-classification model with one logit: score(query, candidate pairs)."""

    model: object
    tokenizer: object
    max_length: int
    device: str
    folder: Path
    meta: dict
    batch_size: int = 256

    @classmethod
    def load(cls, folder: str | Path, device: str = "auto") -> "CrossEncoder":
        """Load a `codemap train-reranker` folder. Raises CodemapError when it is not one."""
        folder = Path(folder).expanduser()
        meta_file = folder / RERANKER_FILE
        if not meta_file.is_file():
            raise CodemapError(f"--rerank {folder}: not a re-ranker folder (no {RERANKER_FILE}); "
                               f"train one with `codemap train-reranker --out DIR` and pass DIR/model")
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        model = AutoModelForSequenceClassification.from_pretrained(folder).to(device).eval()
        return cls(model, AutoTokenizer.from_pretrained(folder), int(meta.get("max_length", 67)),
                   device, folder, meta)

    def score(self, queries: list[str], candidates: list[str]) -> np.ndarray:
        """One logit per (query, candidate) pair, in input order."""
        import torch

        out = np.zeros(len(queries), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(queries), self.batch_size):
                end = start + self.batch_size
                tokens = self.tokenizer(queries[start:end], candidates[start:end], padding=True,
                                        truncation=True, max_length=self.max_length,
                                        return_tensors="pt").to(self.device)
                out[start:end] = self.model(**tokens).logits[:, 0].float().cpu().numpy()
        return out


def rerank_candidates(found: pd.DataFrame, query_texts: list[str], reranker: CrossEncoder,
                      top: int) -> pd.DataFrame:
    """Re-order each query's candidates of rank ≤ `top` by the cross-encoder's logit.

    `found` is `rank_hybrid`'s frame (`query` indexes `query_texts`). The candidate side of a
    pair is the concept's name (`target_name`): the re-ranker was trained on concept names. Each
    re-scored candidate's explanation gets the logit and, when it moved, its old rank.
    """
    if found.empty or top < 2:
        return found
    head = found["rank"] <= top
    sub = found[head].copy()
    logits = reranker.score([query_texts[q] for q in sub["query"]], sub["target_name"].astype(str).tolist())
    sub["_logit"] = logits
    sub = sub.sort_values(["query", "_logit", "rank"], ascending=[True, False, True], kind="stable")
    old = sub["rank"].to_numpy()
    sub["rank"] = sub.groupby("query").cumcount().to_numpy() + 1
    notes = [f"reranker {l:.2f}" + (f", moved from rank {o}" if o != r else "")
             for l, o, r in zip(sub["_logit"], old, sub["rank"])]
    sub["explanation"] = [f"{e}; {n}" if e else n for e, n in zip(sub["explanation"].fillna(""), notes)]
    merged = pd.concat([sub.drop(columns="_logit"), found[~head]])
    return merged.sort_values(["query", "rank"], kind="stable").reset_index(drop=True)
