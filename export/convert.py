"""Hugging Face checkpoint → ONNX graph with pooling and L2 normalisation inside, and its variants.

Pooling sits inside the graph so that the runtime (codemap.embed.onnx_backend) only tokenises and
runs: the manifest's pooling can never be applied twice or forgotten, and the runtime needs no torch.
"""
from __future__ import annotations

import logging
import warnings
from pathlib import Path

import torch

from codemap.embed import pool
from codemap.errors import CodemapError
from codemap.embed import ModelInfo, Pooling

log = logging.getLogger(__name__)

# Encoder-only families whose graphs onnxruntime's BERT optimiser fuses and whose forward takes
# (input_ids, attention_mask). Anything else is refused rather than exported half-right.
SUPPORTED_TYPES = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "electra", "mpnet"}
OPSET = 17
INPUTS = ["input_ids", "attention_mask"]
OUTPUT = "embeddings"


def load_checkpoint(info: ModelInfo):
    """(model, tokenizer) of a torch checkpoint; CodemapError for unsupported or broken folders."""
    try:
        from transformers import AutoConfig, AutoModel, AutoTokenizer
    except ImportError:
        raise CodemapError("export needs transformers: pip install 'codemap[export]'") from None
    try:
        config = AutoConfig.from_pretrained(info.path)
    except (OSError, ValueError) as exc:
        raise CodemapError(f"{info.path}: not a readable model config ({str(exc).splitlines()[0]})") from None
    if config.model_type not in SUPPORTED_TYPES:
        raise CodemapError(f"{info.path}: architecture {config.model_type!r} is not supported for "
                           f"export (supported: {', '.join(sorted(SUPPORTED_TYPES))})")
    try:
        tokenizer = AutoTokenizer.from_pretrained(info.path)
        # Eager attention traces to plain MatMul/Softmax that every runtime and the optimiser know.
        model = AutoModel.from_pretrained(info.path, attn_implementation="eager").eval()
    except (OSError, ValueError) as exc:
        raise CodemapError(f"{info.path}: could not load the model ({str(exc).splitlines()[0]})") from None
    if not tokenizer.is_fast:
        raise CodemapError(f"{info.path}: the model has no fast tokenizer (tokenizer.json); "
                           f"the ONNX runtime needs one")
    return model, tokenizer


def export_fp32(model, info: ModelInfo, target: Path) -> None:
    """Trace `model` + pooling + normalisation to `target`, dynamic in batch and sequence length."""
    wrapper = _Pooled(model, info.pooling, info.normalize).eval()
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    axes[OUTPUT] = {0: "batch"}
    with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about constants are expected here
        torch.onnx.export(wrapper, (sample, sample), str(target), input_names=INPUTS,
                          output_names=[OUTPUT], dynamic_axes=axes, opset_version=OPSET,
                          dynamo=False)


class _Pooled(torch.nn.Module):
    """The checkpoint followed by the manifest's pooling and normalisation."""

    def __init__(self, model, pooling: Pooling, normalize: bool):
        super().__init__()
        self.model, self.pooling, self.normalize = model, pooling, normalize

    def forward(self, input_ids, attention_mask):
        hidden = self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        vectors = pool(hidden, attention_mask, self.pooling)
        return torch.nn.functional.normalize(vectors, dim=-1) if self.normalize else vectors


def optimize_graph(source: Path, target: Path, config) -> None:
    """onnxruntime's transformer optimiser: fuses attention, LayerNorm and GELU into single ops."""
    from onnxruntime.transformers.optimizer import optimize_model

    heads = getattr(config, "num_attention_heads", 0) or getattr(config, "n_heads", 0)
    hidden = getattr(config, "hidden_size", 0) or getattr(config, "dim", 0)
    optimized = optimize_model(str(source), model_type="bert", num_heads=heads, hidden_size=hidden,
                               opt_level=1)
    optimized.save_model_to_file(str(target))


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the weights (activations quantised per batch at run time)."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Quantise the plain (un-fused) graph, per channel; the export passes a smoothed one
    # (smooth.py). Measured on the default MiniLM, 4,739 LOINC names, unsmoothed: per-tensor
    # cosine to fp32 min 0.898 / mean 0.957; per-channel 0.972 / 0.992; per-channel smoothed
    # 0.984 / 0.997. On the fused graph the Attention ops hold the QKV
    # weights and stay fp32, so less is quantised: more accurate but measured ~2x slower.
    # DefaultTensorType: a fused graph has tensors of unknown type the quantiser otherwise refuses.
    # The quantiser logs "consider pre-processing" on the root logger every time (a hint for
    # static quantisation of CNNs); keep it out of the user's terminal.
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"],
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
    finally:
        logging.disable(logging.NOTSET)


def convert_fp16(source: Path, target: Path) -> None:
    """fp16 weights and activations for GPUs; inputs and output keep their types."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = convert_float_to_float16(onnx.load(str(source)), keep_io_types=True)
    onnx.save(model, str(target))


def external_weights(path: Path) -> None:
    """Move a model file's weights out of its protobuf into `<name>_data` beside it (model.onnx →
    model.onnx_data). onnxruntime maps such weights from disk instead of parsing and copying
    them: a session of the default model opens in 0.1 s instead of 1.1 s, on every run."""
    import onnx

    model = onnx.load(str(path))
    onnx.save_model(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location=f"{path.name}_data", size_threshold=1024)
