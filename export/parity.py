"""Parity of an ONNX export with its PyTorch checkpoint, on real terms, through Encoder.encode.

Like optimum's `validate_model_outputs`: every variant is checked before anything fails, the report
names the worst term, and a specific error is raised at the end. Two measures:
- cosine between the torch and ONNX vector of each term (min and mean, worst term named);
- retrieval agreement on a real vocabulary: LOINC short names (queries) against LOINC long common
  names (corpus) from the built-in subset; top-1 agreement and mean top-10 overlap with torch.
"""
from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np

from codemap.config import EncoderConfig
from codemap.encoder import Encoder
from codemap.errors import CodemapError
from codemap.models import ModelInfo
from codemap.vocab import builtin_loinc

log = logging.getLogger(__name__)

# fp32 must reproduce torch up to float rounding; anything lower means the graph is wrong.
MIN_FP32_COSINE = 0.999
# int8 top-1 agreement floor. Dynamic int8 keeps cosine ≥ 0.999 to fp32 on MiniLM; such noise can
# only swap near-ties, which measured 1–2 % of LOINC short-name queries. A variant that flips more
# than 1 query in 20 is changing rankings a reviewer would see, not breaking ties: refuse it and
# export fp32 (or fp16 on GPU) instead.
MIN_INT8_TOP1 = 0.95
MIN_FP16_TOP1 = 0.98  # fp16 keeps ~3 significant digits, so it must agree even more closely


@dataclass(frozen=True)
class ParityTerms:
    """Real queries and corpus for the check."""

    queries: list[str]
    corpus: list[str]

    @property
    def all(self) -> list[str]:
        return self.queries + self.corpus


def loinc_terms(limit: int | None = None) -> ParityTerms:
    """LOINC short names (queries) and long common names (corpus) from the built-in subset."""
    vocab = builtin_loinc()
    names = vocab.names
    queries = names.loc[names["name_type"] == "short", "name"].tolist()
    corpus = names.loc[names["name_type"] == "preferred", "name"].tolist()
    if limit:
        queries, corpus = queries[:limit], corpus[:max(limit, 1000)]
    return ParityTerms(queries=queries, corpus=corpus)


def top_k(queries: np.ndarray, corpus: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of the k most similar corpus vectors per query (inner product), best first."""
    scores = queries @ corpus.T
    k = min(k, corpus.shape[0])
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    order = np.take_along_axis(scores, part, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(part, order, axis=1)


def compare(reference: np.ndarray, candidate: np.ndarray, terms: ParityTerms) -> dict:
    """Cosine and retrieval agreement of `candidate` vectors against `reference` (same terms)."""
    ref = _unit(reference)
    cand = _unit(candidate)
    cosine = (ref * cand).sum(axis=1)
    worst = int(cosine.argmin())
    n = len(terms.queries)
    ref_top = top_k(ref[:n], ref[n:], 10)
    cand_top = top_k(cand[:n], cand[n:], 10)
    overlap = [len(set(a) & set(b)) / a.size for a, b in zip(ref_top, cand_top)]
    return {"terms": len(cosine), "cosine_min": float(cosine.min()),
            "cosine_mean": float(cosine.mean()), "worst_term": terms.all[worst],
            "top1_agreement": float((ref_top[:, 0] == cand_top[:, 0]).mean()),
            "top10_overlap": float(np.mean(overlap))}


def check_parity(torch_info: ModelInfo, onnx_info: ModelInfo, variants: dict[str, str],
                 terms: ParityTerms, batch_size: int = 64) -> dict:
    """Compare each ONNX variant (name → file) with the torch model; returns the report.

    Raises CodemapError naming every failed variant after all were checked; the report is still
    returned through the exception's `report` attribute so the caller can save it.
    """
    config = EncoderConfig(device="cpu", batch_size=batch_size)
    reference = Encoder(torch_info, config).encode(terms.all)
    report = {"queries": len(terms.queries), "corpus": len(terms.corpus), "variants": {}}
    for name, filename in variants.items():
        encoder = Encoder(dataclasses.replace(onnx_info, onnx_file=filename), config)
        report["variants"][name] = {"file": filename,
                                    **compare(reference, encoder.encode(terms.all), terms)}
        log.info("parity %s: %s", name, report["variants"][name])
    failures = _failures(report["variants"])
    report["passed"] = not failures
    if failures:
        error = CodemapError("export parity failed: " + "; ".join(failures))
        error.report = report
        raise error
    return report


def _failures(variants: dict) -> list[str]:
    out = []
    for name, result in variants.items():
        if name == "fp32" and result["cosine_min"] < MIN_FP32_COSINE:
            out.append(f"fp32 cosine {result['cosine_min']:.5f} < {MIN_FP32_COSINE} "
                       f"(worst term {result['worst_term']!r})")
        floor = {"int8": MIN_INT8_TOP1, "fp16": MIN_FP16_TOP1}.get(name)
        if floor and result["top1_agreement"] < floor:
            out.append(f"{name} top-1 agreement {result['top1_agreement']:.3f} < {floor} "
                       f"(worst term {result['worst_term']!r}); export without --{name}")
    return out


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.clip(norms, 1e-12, None)
