"""CODER's losses: term–term multi-similarity (MS) loss, term–relation–term MS loss, and the
ablations (TransE-style relation term, in-batch InfoNCE). Every loss is vectorised over pairs.

Reference: Yuan, Zhao et al., "CODER: Knowledge infused cross-lingual medical term embedding for
term normalization" (arXiv 2011.02947), section 3; Wang et al., "Multi-Similarity Loss with
General Pair Weighting for Deep Metric Learning" (CVPR 2019).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

# Masked-out pairs get this logit instead of -inf: exp() of it is exactly 0 in float32, and unlike
# -inf it keeps logsumexp's gradient finite for anchors with nothing mined.
_OFF = -1e4


def mine_hard_pairs(sim: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor,
                    eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """MS hard-pair mining per anchor row of `sim` (n, n'):
    negatives with S > (smallest positive S) - eps, positives with S < (largest negative S) + eps.

    Returns boolean masks (hard_pos, hard_neg). Rows without positives keep no negatives and rows
    without negatives keep no positives (the comparison with ±inf is never true).
    """
    inf = torch.tensor(float("inf"), device=sim.device, dtype=sim.dtype)
    min_pos = torch.where(pos, sim, inf).min(dim=1, keepdim=True).values
    max_neg = torch.where(neg, sim, -inf).max(dim=1, keepdim=True).values
    hard_neg = neg & (sim > min_pos - eps)
    hard_pos = pos & (sim < max_neg + eps)
    return hard_pos, hard_neg


def ms_loss_from_similarity(sim: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor, *,
                            alpha: float, beta: float, lam: float, eps: float) -> torch.Tensor:
    """MS loss over anchor rows, summed over anchors that keep ≥1 positive and ≥1 negative after
    mining and divided by the number of anchors (as the CODER reference code does):

        (1/α)·log(1 + Σ_pos exp(−α(S−λ))) + (1/β)·log(1 + Σ_neg exp(β(S−λ)))
    """
    sim = sim.float()
    hard_pos, hard_neg = mine_hard_pairs(sim.detach(), pos, neg, eps)
    used = hard_pos.any(dim=1) & hard_neg.any(dim=1)
    pos_logits = torch.where(hard_pos, -alpha * (sim - lam), torch.full_like(sim, _OFF))
    neg_logits = torch.where(hard_neg, beta * (sim - lam), torch.full_like(sim, _OFF))
    pos_term = F.softplus(torch.logsumexp(pos_logits, dim=1)) / alpha  # log(1 + Σ exp)
    neg_term = F.softplus(torch.logsumexp(neg_logits, dim=1)) / beta
    per_anchor = (pos_term + neg_term) * used
    return per_anchor.sum() / sim.shape[0]


def _term_pairs(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(same concept, may pair): pairs of two different names that both have a label ≥ 0."""
    same = labels[:, None] == labels[None, :]
    valid = labels >= 0
    eye = torch.eye(len(labels), dtype=torch.bool, device=labels.device)
    return same, valid[:, None] & valid[None, :] & ~eye


class MultiSimilarityLoss(nn.Module):
    """Loss 1: MS loss on term–term pairs.

    Input: embeddings (n, d) (normalised here) and concept labels (n,); two names are a positive
    pair when they share a concept. Names with a negative label (relation-only concepts) form no
    pair at all. Paper defaults α=2, β=50, λ=0.5, ε=0.1.
    """

    def __init__(self, alpha: float = 2.0, beta: float = 50.0, lam: float = 0.5, eps: float = 0.1):
        super().__init__()
        self.alpha, self.beta, self.lam, self.eps = alpha, beta, lam, eps

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor,
                not_negative: torch.Tensor | None = None) -> torch.Tensor:
        unit = F.normalize(embeddings.float(), dim=-1)
        sim = unit @ unit.T
        same, pairs = _term_pairs(labels)
        neg = ~same & pairs if not_negative is None else ~same & pairs & ~not_negative
        return ms_loss_from_similarity(sim, same & pairs, neg, alpha=self.alpha,
                                       beta=self.beta, lam=self.lam, eps=self.eps)

    def get_config_dict(self) -> dict:
        return {"alpha": self.alpha, "beta": self.beta, "lam": self.lam, "eps": self.eps}


class InfoNCELoss(nn.Module):
    """Ablation for loss 1: in-batch-negative InfoNCE on (name, name) pairs, every other name of
    the same concept in the batch a positive (supervised contrastive form):
    loss_i = −log(Σ_pos exp(S_ij/τ) / Σ_{j≠i} exp(S_ij/τ)), averaged over anchors with a positive.
    """

    def __init__(self, temperature: float = 0.05):
        super().__init__()
        self.temperature = temperature

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor,
                not_negative: torch.Tensor | None = None) -> torch.Tensor:
        unit = F.normalize(embeddings.float(), dim=-1)
        logits = unit @ unit.T / self.temperature
        same, pairs = _term_pairs(labels)
        pos = same & pairs
        if not_negative is not None:
            pairs = pairs & (same | ~not_negative)
        logits = logits.masked_fill(~pairs, _OFF)
        log_all = torch.logsumexp(logits, dim=1)
        log_pos = torch.logsumexp(logits.masked_fill(~pos, _OFF), dim=1)
        has_pos = pos.any(dim=1)
        if not has_pos.any():
            return logits.sum() * 0.0
        return (log_all - log_pos)[has_pos].mean()

    def get_config_dict(self) -> dict:
        return {"temperature": self.temperature}


class RelationMSLoss(nn.Module):
    """Loss 2 ("dual" part): MS loss on term–relation–term pairs, cosine form.

    One matrix M_r (d×d, identity at start) per relation label. For head name e_i of triplet i and
    tail name e_j of triplet j: S_ij = cos(M_{r_i}ᵀ e_i, e_j); the pair is positive when the tails'
    concepts are equal (t_i = t_j, the diagonal included). With every M_r = I this is loss 1 on
    head–tail pairs. Inputs: heads (k, d), tails (k, d), relation ids (k,), tail labels (k,).
    """

    def __init__(self, n_relations: int, dim: int, alpha: float = 2.0, beta: float = 50.0,
                 lam: float = 0.5, eps: float = 0.1):
        super().__init__()
        self.matrices = nn.Parameter(torch.eye(dim).repeat(n_relations, 1, 1))
        self.alpha, self.beta, self.lam, self.eps = alpha, beta, lam, eps

    def forward(self, heads: torch.Tensor, tails: torch.Tensor, relations: torch.Tensor,
                tail_labels: torch.Tensor) -> torch.Tensor:
        # M_rᵀ e for each row: (k, d, d) gathered matrices times (k, d) heads.
        projected = torch.einsum("kde,kd->ke", self.matrices[relations], heads.float())
        sim = F.normalize(projected, dim=-1) @ F.normalize(tails.float(), dim=-1).T
        same = tail_labels[:, None] == tail_labels[None, :]
        return ms_loss_from_similarity(sim, same, ~same, alpha=self.alpha, beta=self.beta,
                                       lam=self.lam, eps=self.eps)

    def get_config_dict(self) -> dict:
        return {"alpha": self.alpha, "beta": self.beta, "lam": self.lam, "eps": self.eps}


class TransELoss(nn.Module):
    """Ablation for loss 2: S_ij = −‖e_i + r_i − e_j‖ on raw (unnormalised) embeddings, one
    learned vector r per relation (zero at start), fed to the same MS loss. The paper needed
    λ ≈ −28 (distances under 28 count as close), α, β = 0.2, 5 and μ = 0.1 to keep it stable.
    """

    def __init__(self, n_relations: int, dim: int, alpha: float = 0.2, beta: float = 5.0,
                 lam: float = -28.0, eps: float = 0.1):
        super().__init__()
        self.vectors = nn.Parameter(torch.zeros(n_relations, dim))
        self.alpha, self.beta, self.lam, self.eps = alpha, beta, lam, eps

    def forward(self, heads: torch.Tensor, tails: torch.Tensor, relations: torch.Tensor,
                tail_labels: torch.Tensor) -> torch.Tensor:
        moved = heads.float() + self.vectors[relations]
        sim = -torch.cdist(moved, tails.float())
        same = tail_labels[:, None] == tail_labels[None, :]
        return ms_loss_from_similarity(sim, same, ~same, alpha=self.alpha, beta=self.beta,
                                       lam=self.lam, eps=self.eps)

    def get_config_dict(self) -> dict:
        return {"alpha": self.alpha, "beta": self.beta, "lam": self.lam, "eps": self.eps}


class CoderLoss(nn.Module):
    """L = L_term + μ·L_relation over one batch of 2k names (k heads, then k tails), optionally
    followed by explicit hard-negative names: they enter the term loss only.

    `term` is MultiSimilarityLoss or InfoNCELoss; `relation` is RelationMSLoss, TransELoss or
    None (the "without relation loss" ablation). Returns a dict of the total and its parts.
    """

    def __init__(self, term: nn.Module, relation: nn.Module | None = None, mu: float = 1.0,
                 triplet_end_negatives: bool = True):
        super().__init__()
        self.term, self.relation, self.mu = term, relation, mu
        self.triplet_end_negatives = triplet_end_negatives

    def forward(self, embeddings: torch.Tensor, labels: torch.Tensor, relations: torch.Tensor,
                ) -> dict[str, torch.Tensor]:
        k = len(relations)
        not_negative = None if self.triplet_end_negatives else triplet_ends(labels, k)
        term = self.term(embeddings, labels, not_negative)
        if self.relation is None:
            return {"loss": term, "term": term.detach(), "relation": torch.zeros(())}
        heads, tails = embeddings[:k], embeddings[k:2 * k]
        relation = self.relation(heads, tails, relations, labels[k:2 * k])
        return {"loss": term + self.mu * relation, "term": term.detach(),
                "relation": relation.detach()}


def triplet_ends(labels: torch.Tensor, k: int) -> torch.Tensor:
    """(n, n) mask of name pairs whose concepts are the head and the tail of one of the batch's k
    triplets (either order): with triplet_end_negatives=False the term loss does not push them
    apart (an ICD code and its parent are each other's hardest negatives; only the relation loss
    relates them)."""
    heads = (labels[:, None] == labels[None, :k]).float()  # (n, k): name is the head of row r
    tails = (labels[:, None] == labels[None, k:2 * k]).float()
    linked = (heads @ tails.T) > 0
    return linked | linked.T
