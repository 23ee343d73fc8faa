"""Run a codemap ONNX export: fast tokenizer in batch, then one ONNX Runtime call per batch.

The exported graph already pools and L2-normalises (see `codemap.export`), so the runtime does
nothing but tokenise and run; it needs onnxruntime and tokenizers, not torch or transformers.
On a machine with onnxruntime-gpu and a GPU the fp16 variant runs on CUDAExecutionProvider;
everywhere else the manifest's `onnx_file` (int8 when it was exported with `--int8`) runs on CPU.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from ..config import EncoderConfig
from ..errors import CodemapError
from .manifest import ModelInfo

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
ORT_FATAL_ONLY = 4  # onnxruntime log severity: keep its CUDA-not-found errors away from users


class OnnxBackend:
    """Embeds texts with an exported model; `.embed(texts)` returns final (pooled, normalised) vectors."""

    def __init__(self, info: ModelInfo, config: EncoderConfig):
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise CodemapError("ONNX models need onnxruntime and tokenizers: "
                               "pip install onnxruntime tokenizers") from None
        self.ort = ort
        self.info = info
        self.tokenizer = _load_tokenizer(Tokenizer, info)
        self.session, self.provider, onnx_file = _open_session(ort, info, config.device)
        names = {file: name for name, file in info.extra.get("variants", {}).items()}
        self.variant = f"onnx-{names.get(onnx_file, onnx_file)}"
        self.dim = int(self.session.get_outputs()[0].shape[-1])
        self._input_names = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        feed = {"input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64)}
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        if self.provider == CUDA:
            return self._run_bound(feed)
        return self.session.run(None, feed)[0].astype(np.float32, copy=False)

    def token_keys(self, texts: list[str]) -> list[bytes]:
        """What the model reads of each text (its token ids after the cut), as a hashable key."""
        return [np.array(e.ids[:sum(e.attention_mask)], np.int32).tobytes()
                for e in self.tokenizer.encode_batch(texts)]

    def _run_bound(self, feed: dict) -> np.ndarray:
        # IO binding copies the inputs to the GPU once and lets the output stay put until read.
        binding = self.session.io_binding()
        for name, array in feed.items():
            binding.bind_cpu_input(name, array)
        binding.bind_output(self.session.get_outputs()[0].name)
        self.session.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()[0].astype(np.float32, copy=False)


def _load_tokenizer(tokenizer_class, info: ModelInfo):
    path = info.path / "tokenizer.json"
    if not path.exists():
        raise CodemapError(f"{info.path}: no tokenizer.json; re-export the model with `codemap export`")
    tokenizer = tokenizer_class.from_file(str(path))
    tokenizer.enable_truncation(max_length=info.max_length)
    pad_id = int(info.extra.get("pad_id", 0))
    pad_token = str(info.extra.get("pad_token", "[PAD]"))
    # Pad to the longest text of the batch: Encoder.encode sorts by length, so batches are
    # length-bucketed and padding stays small.
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
    return tokenizer


def _open_session(ort, info: ModelInfo, device: str):
    """(session, provider, file): CUDA with the fp16 variant when usable, else CPU with
    `onnx_file` (int8 only when the export found it agrees with torch, see export.parity)."""
    variants = info.extra.get("variants", {})
    cuda_listed = CUDA in ort.get_available_providers()
    if info.extra.get("cpu_only"):  # --backend int8: dynamic int8 kernels are CPU kernels
        if device == "cuda":
            raise CodemapError("--backend int8 runs on CPU; drop --device cuda (the GPU runs fp16)")
        cuda_listed = False
    if device == "cuda" and not cuda_listed:
        raise CodemapError("--device cuda was asked for, but onnxruntime has no CUDA provider; "
                           "install onnxruntime-gpu in place of onnxruntime (see README)")
    if device in ("auto", "cuda") and cuda_listed:
        gpu_file = variants.get("fp16", info.onnx_file)
        session = _session(ort, info.path / gpu_file, [CUDA, CPU])
        # onnxruntime-gpu lists CUDA even on a machine without a GPU, then silently runs on CPU.
        if CUDA in session.get_providers():
            log.info("ONNX model %s on CUDA", gpu_file)
            return session, CUDA, gpu_file
        if device == "cuda":
            raise CodemapError("--device cuda was asked for, but onnxruntime could not start "
                               "CUDA (no GPU or no CUDA libraries)")
        log.info("CUDA provider listed but unusable; running %s on CPU", info.onnx_file)
    return _session(ort, info.path / info.onnx_file, [CPU]), CPU, info.onnx_file


def _session(ort, path: Path, providers: list[str]):
    if not path.exists():
        raise CodemapError(f"{path}: ONNX file named in codemap.json is missing; re-export the model")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = _cpu_threads()
    options.inter_op_num_threads = 1  # one graph at a time: parallelism inside the operators
    options.log_severity_level = ORT_FATAL_ONLY
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=providers)
    except Exception as exc:  # onnxruntime raises its own Fail/InvalidGraph types, not exported
        raise CodemapError(f"{path}: onnxruntime could not load it ({str(exc).splitlines()[0]})") from None


def _cpu_threads() -> int:
    """OMP_NUM_THREADS when set (as torch honours it), else every core this process may use."""
    wanted = os.environ.get("OMP_NUM_THREADS", "")
    if wanted.isdigit() and int(wanted) > 0:
        return int(wanted)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
