"""Term similarity benchmarks, scored the way the CODER and BNE papers do: the Spearman correlation
between the cosine of two terms' embeddings and the human rating of the pair (MayoSRS, UMNSRS
similarity and relatedness). It measures the embedding space itself, beside the mapping dev sets.

The rating files are research data for evaluation only: codemap reads them from where the user
keeps them and ships none.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from ..errors import CodemapError

# Rating column names of the published files, in order of preference (MiniMayoSRS has two raters'
# means; the papers report the physicians').
_RATING_COLUMNS = ("mean", "physicians", "rating", "score")


@dataclass(frozen=True)
class SimilarityResult:
    name: str  # the file's stem
    pairs: int
    spearman: float

    def as_row(self) -> dict:
        return {"set": self.name, "pairs": self.pairs, "spearman": round(self.spearman, 3)}


def read_rated_pairs(path: str | Path) -> pd.DataFrame:
    """A ratings file → (term1, term2, rating). Accepted: a CSV with a header naming TERM1, TERM2
    and a rating column (MayoSRS), or a headerless tab-separated `term1, term2, rating` (UMNSRS).

    Raises CodemapError naming the file when it is neither.
    """
    path = Path(path)
    if not path.exists():
        raise CodemapError(f"{path}: file not found")
    text = path.read_text(encoding="utf-8-sig")
    first = text.splitlines()[0] if text.strip() else ""
    if "\t" in first:
        frame = pd.read_csv(path, sep="\t", header=None, dtype=str, keep_default_na=False,
                            quoting=3, usecols=[0, 1, 2], names=["term1", "term2", "rating"])
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        columns = {c.strip().lower(): c for c in frame.columns}
        rating = next((columns[c] for c in _RATING_COLUMNS if c in columns), None)
        if "term1" not in columns or "term2" not in columns or rating is None:
            raise CodemapError(f"{path}: expected columns TERM1, TERM2 and a rating "
                               f"({', '.join(_RATING_COLUMNS)}), or tab-separated term1, term2, "
                               f"rating without a header")
        frame = frame.rename(columns={columns["term1"]: "term1", columns["term2"]: "term2",
                                      rating: "rating"})[["term1", "term2", "rating"]]
    frame["rating"] = pd.to_numeric(frame["rating"], errors="coerce")
    bad = frame["rating"].isna() | (frame["term1"].str.strip() == "") | (frame["term2"].str.strip() == "")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0]) + 1
        raise CodemapError(f"{path}, pair {row}: an empty term or a rating that is not a number")
    return frame.reset_index(drop=True)


def score_similarity(encoder, path: str | Path) -> SimilarityResult:
    """Spearman ρ between the cosine of each pair's embeddings and its human rating.
    `encoder` is a `codemap.encoder.Encoder` (vectors come back L2-normalised)."""
    pairs = read_rated_pairs(path)
    first = encoder.encode(pairs["term1"].tolist())
    second = encoder.encode(pairs["term2"].tolist())
    cosine = np.sum(first * second, axis=1)
    rho = spearmanr(cosine, pairs["rating"].to_numpy()).statistic
    return SimilarityResult(Path(path).stem, len(pairs), float(rho))
