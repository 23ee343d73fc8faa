"""SmoothQuant experiments for the int8 export (README, "int8 accuracy experiments").

Dynamic int8 quantises each MatMul input with one scale per tensor, and BERT's hidden states have a
few channels tens of times larger than the rest, so the small channels lose their precision.
SmoothQuant (Xiao et al. 2023) moves that range into the weights: y = (x / s) · (s · W), with
s_j = max|x_j|^α / max|W_j|^(1-α) per input channel j, measured on calibration text. In post-LN
BERT the LayerNorm output is also the residual stream, so 1/s cannot be folded into the LayerNorm;
it stays an explicit per-channel Mul before the MatMul (cheap next to the MatMul).

    OMP_NUM_THREADS=1 python benchmarks/int8/int8_smoothquant.py OUT_DIR [ALPHA ...]

Calibration text: the shipped drug target names (not the LOINC names the parity check scores).
Metrics: export/parity.py against torch on all 4,739 built-in LOINC names, as int8_experiments.py.
"""
import json
import sys
import time
from pathlib import Path

import numpy as np

from codemap.config import EncoderConfig
from codemap.embed import Encoder
from codemap.embed import resolve_model
from codemap.export import convert, parity
from codemap.export.smooth import export_smoothed
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


OUT = Path(ARGS[0])
OUT.mkdir(parents=True, exist_ok=True)
alphas = [float(a) for a in ARGS[1:]] or [0.5]
info = resolve_model("default")
terms = parity.loinc_terms()
cfg = EncoderConfig(device="cpu", batch_size=64)
ref_path = OUT / "torch.npy"
if not ref_path.exists():
    np.save(ref_path, Encoder(info, cfg).encode(terms.all))
ref = np.load(ref_path)


def measure(label: str, onnx_path: Path, export_info) -> None:
    import dataclasses
    enc = Encoder(dataclasses.replace(export_info, onnx_file=str(onnx_path)), cfg)
    enc.encode(terms.all[:200])
    start = time.perf_counter()
    vectors = enc.encode(terms.all)
    seconds = time.perf_counter() - start
    report = parity.compare(ref, vectors, terms)
    print(json.dumps({"config": label, "terms_per_s": round(len(terms.all) / seconds),
                      **{k: round(v, 4) for k, v in report.items() if isinstance(v, float)}}), flush=True)


def export_info_for(folder: Path):
    from codemap.export import ExportConfig, export_model
    if not (folder / "codemap.json").exists():
        export_model(ExportConfig(model="default", out=folder, int8=True))
    return resolve_model(str(folder))


base = export_info_for(OUT / "plain")  # its model.onnx is the plain fp32 graph
plain_int8 = OUT / "plain.int8.onnx"
if not plain_int8.exists():
    convert.quantize_int8(OUT / "plain" / "model.onnx", plain_int8)
measure("plain int8 (no smoothing)", plain_int8, base)
for alpha in alphas:
    model, tokenizer = convert.load_checkpoint(info)
    raw = OUT / f"smooth-{alpha}.onnx"
    export_smoothed(model, tokenizer, info, raw, alpha)
    measure(f"smooth α={alpha} fp32", raw, base)
    q = OUT / f"smooth-{alpha}.int8.onnx"
    convert.quantize_int8(raw, q)
    measure(f"smooth α={alpha} int8", q, base)
