"""The trainable pieces: a Hugging Face encoder with the checkpoint's pooling, and the loss
module that owns the relation matrices. Both sit in one nn.Module so DDP syncs all of them."""
from __future__ import annotations

import torch
from torch import nn

from codemap.embed import pool
from codemap.embed import Pooling

from .config import TrainConfig
from .losses import CoderLoss, InfoNCELoss, MultiSimilarityLoss, RelationMSLoss, TransELoss


class TermEncoder(nn.Module):
    """Names → pooled vectors (not normalised: the losses normalise, TransE needs raw ones)."""

    def __init__(self, model: nn.Module, tokenizer, pooling: Pooling, max_length: int):
        super().__init__()
        self.model, self.tokenizer, self.pooling, self.max_length = model, tokenizer, pooling, max_length

    def tokenize(self, names: list[str], device) -> dict[str, torch.Tensor]:
        return self.tokenizer(names, padding=True, truncation=True, max_length=self.max_length,
                              return_tensors="pt").to(device)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **extra) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
        return pool(hidden, attention_mask, self.pooling)


class CoderModel(nn.Module):
    """Encoder + CoderLoss: forward(tokens, labels, relations) → {"loss", "term", "relation"}."""

    def __init__(self, encoder: TermEncoder, loss: CoderLoss):
        super().__init__()
        self.encoder, self.loss = encoder, loss

    def forward(self, tokens: dict, labels: torch.Tensor, relations: torch.Tensor) -> dict:
        return self.loss(self.encoder(**tokens), labels, relations)


def build_loss(config: TrainConfig, n_relations: int, dim: int) -> CoderLoss:
    """CoderLoss with the term and relation parts the config asks for (paper or ablation)."""
    if config.term_loss == "ms":
        term = MultiSimilarityLoss(config.alpha, config.beta, config.lam, config.eps)
    elif config.term_loss == "infonce":
        term = InfoNCELoss(config.temperature)
    else:
        raise ValueError(f"term_loss {config.term_loss!r}")
    if config.relation_loss == "cosine":
        relation = RelationMSLoss(n_relations, dim, config.alpha, config.beta, config.lam, config.eps)
    elif config.relation_loss == "transe":
        relation = TransELoss(n_relations, dim)
    elif config.relation_loss == "none":
        relation = None
    else:
        raise ValueError(f"relation_loss {config.relation_loss!r}")
    return CoderLoss(term, relation, config.mu, config.triplet_end_negatives)
