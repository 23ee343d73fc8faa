"""Statistics shared by the decision scripts."""
from __future__ import annotations

from scipy.stats import binomtest


def paired(base: dict, trained: dict) -> dict:
    """Pooled counts and the one-sided exact sign test on the discordant queries."""
    pairs = [(b, t) for name in base for b, t in zip(base[name], trained[name])]
    better = sum(t and not b for b, t in pairs)
    worse = sum(b and not t for b, t in pairs)
    p = binomtest(better, better + worse, 0.5, alternative="greater").pvalue if better + worse else 1.0
    return {"queries": len(pairs), "base": sum(b for b, _ in pairs), "trained": sum(t for _, t in pairs),
            "better": better, "worse": worse, "p_one_sided": p,
            "per_set": {name: {"n": len(base[name]), "base": sum(base[name]), "trained": sum(trained[name])}
                        for name in base}}
