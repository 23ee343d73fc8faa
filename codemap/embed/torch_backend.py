"""Run a Hugging Face checkpoint with PyTorch: tokenise, encode, pool and normalise as its
manifest says. torch and transformers are imported when a backend is made, not with this module,
so a machine with only the ONNX runtime can import codemap.
"""
from __future__ import annotations

import numpy as np

from ..config import EncoderConfig
from ..errors import CodemapError
from .manifest import ModelInfo, Pooling


class TorchBackend:
    """A Hugging Face encoder run with PyTorch; pooling and normalisation from the manifest."""

    def __init__(self, info: ModelInfo, config: EncoderConfig):
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise CodemapError("this model needs PyTorch: pip install torch (or export it to ONNX "
                               "with `codemap export`)") from None
        self.torch = torch
        self.info = info
        self.device = _pick_device(torch, config.device)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(info.path)
            self.model = AutoModel.from_pretrained(info.path).to(self.device).eval()
        except (OSError, ValueError) as exc:
            raise CodemapError(f"{info.path}: could not load the model ({str(exc).splitlines()[0]})") from None
        self.dim = int(self.model.config.hidden_size)
        self.variant = "torch"
        self.provider = self.device

    def embed(self, texts: list[str]) -> np.ndarray:
        torch = self.torch
        batch = self.tokenizer(texts, padding=True, truncation=True,
                               max_length=self.info.max_length, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            hidden = self.model(**batch).last_hidden_state
            vectors = pool(hidden, batch["attention_mask"], self.info.pooling)
            if self.info.normalize:
                vectors = torch.nn.functional.normalize(vectors, dim=-1)
        return vectors.float().cpu().numpy()

    def token_keys(self, texts: list[str]) -> list[bytes]:
        """What the model reads of each text (its token ids after the cut), as a hashable key."""
        ids = self.tokenizer(texts, truncation=True, max_length=self.info.max_length)["input_ids"]
        return [np.array(i, np.int32).tobytes() for i in ids]


def pool(hidden, mask, pooling: Pooling):
    """[CLS] vector, or the mean of token vectors over the attention mask."""
    if pooling is Pooling.CLS:
        return hidden[:, 0]
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)


def _pick_device(torch, wanted: str) -> str:
    if wanted == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if wanted == "cuda" and not torch.cuda.is_available():
        raise CodemapError("--device cuda was asked for, but PyTorch sees no CUDA GPU")
    return wanted
