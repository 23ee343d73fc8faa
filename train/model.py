"""The trainable pieces: a Hugging Face encoder with the checkpoint's pooling, and the loss
module that owns the relation matrices. Both sit in one nn.Module so DDP syncs all of them."""
from __future__ import annotations

import torch
from torch import nn

from codemap.embed import Pooling, pool
from codemap.errors import CodemapError

from .config import TrainConfig
from .losses import CoderLoss, InfoNCELoss, MultiSimilarityLoss, RelationMSLoss, TransELoss


class TermEncoder(nn.Module):
    """Names → pooled vectors (not normalised: the losses normalise, TransE needs raw ones).

    `prefix` is the base model's text prefix (e5's "query: "): training sees names exactly as
    `codemap map` will embed them, and the saved manifest keeps the prefix."""

    def __init__(self, model: nn.Module, tokenizer, pooling: Pooling, max_length: int,
                 prefix: str = ""):
        super().__init__()
        self.model, self.tokenizer, self.pooling, self.max_length = model, tokenizer, pooling, max_length
        self.prefix = prefix

    def tokenize(self, names: list[str], device) -> dict[str, torch.Tensor]:
        return self.tokenizer([self.prefix + name for name in names], padding=True,
                              truncation=True, max_length=self.max_length,
                              return_tensors="pt").to(device)

    @property
    def lora(self) -> bool:
        """Whether only low-rank adapters train (the base weights are frozen)."""
        return hasattr(self.model, "peft_config")

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **extra) -> torch.Tensor:
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state
        return pool(hidden, attention_mask, self.pooling)


# Every linear layer of a BERT-family encoder: attention query/key/value, the attention output and
# both feed-forward layers ("dense" names all three). The embeddings stay frozen: for the
# multilingual base they are 250k x 384 weights, and words the graph never shows keep their
# pretrained vectors.
LORA_TARGETS = ["query", "key", "value", "dense"]


def add_lora(model: nn.Module, rank: int, alpha: float, dropout: float) -> nn.Module:
    """Wrap a Hugging Face encoder with LoRA adapters (peft) on every linear layer; only the
    adapters train, so a checkpoint with its optimiser state is megabytes, not the full weights."""
    try:
        from peft import LoraConfig, get_peft_model
    except ImportError:
        raise CodemapError("--lora-rank needs the peft package: pip install 'codemap[train]'") from None
    return get_peft_model(model, LoraConfig(r=rank, lora_alpha=alpha, lora_dropout=dropout,
                                            target_modules=LORA_TARGETS, bias="none"))


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
