"""Static (calibrated) int8 of the smoothed graph, beside the shipped dynamic int8 (README, "int8
accuracy experiments"): onnxruntime `quantize_static`, QDQ, per-channel QInt8 weights, QUInt8
activations with fixed scales from MinMax or 99.99th-percentile calibration on 512 shipped drug
names (padded to 32 tokens: the percentile collector needs one shape).

    OMP_NUM_THREADS=1 python benchmarks/int8/int8_smoothquant.py OUT 0.75   # makes OUT's inputs
    OMP_NUM_THREADS=1 python benchmarks/int8/int8_static.py OUT
"""
import dataclasses
import json
import sys
import time
from pathlib import Path
import numpy as np
from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                      quantize_static)
from codemap.config import EncoderConfig
from codemap.embed import Encoder
from codemap.embed import resolve_model
from codemap.export import parity
from codemap.export.smooth import calibration_texts
from transformers import AutoTokenizer
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


SQ = Path(ARGS[0])  # the OUT folder of int8_smoothquant.py (plain/, torch.npy, smooth-0.75.onnx)
base = resolve_model(str(SQ / "plain"))
tok = AutoTokenizer.from_pretrained(str(SQ / "plain"))
texts = calibration_texts()

class Reader(CalibrationDataReader):
    def __init__(self):
        self.batches = []
        for i in range(0, 512, 64):
            b = tok(texts[i:i+64], padding="max_length", truncation=True, max_length=32, return_tensors="np")
            self.batches.append({"input_ids": b["input_ids"].astype(np.int64), "attention_mask": b["attention_mask"].astype(np.int64)})
        self.it = iter(self.batches)
    def get_next(self):
        return next(self.it, None)

terms = parity.loinc_terms()
ref = np.load(SQ / "torch.npy")
cfg = EncoderConfig(device="cpu", batch_size=64)
def measure(label, path):
    enc = Encoder(dataclasses.replace(base, onnx_file=str(path)), cfg)
    enc.encode(terms.all[:200])
    t = time.perf_counter(); v = enc.encode(terms.all); s = time.perf_counter() - t
    r = parity.compare(ref, v, terms)
    print(json.dumps({"config": label, "terms_per_s": round(len(terms.all)/s), **{k: round(x, 4) for k, x in r.items() if isinstance(x, float)}}), flush=True)

for src, method in [("smooth-0.75.onnx", CalibrationMethod.MinMax), ("smooth-0.75.onnx", CalibrationMethod.Percentile)]:
    out = SQ / f"static-{method.name}-{src}"
    if not out.exists():
        extra = {"ActivationSymmetric": False, "WeightSymmetric": True}
        if method == CalibrationMethod.Percentile:
            extra["CalibPercentile"] = 99.99
        quantize_static(str(SQ / src), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        op_types_to_quantize=["MatMul"], calibrate_method=method, extra_options=extra)
    measure(f"static {method.name} {src}", out)
measure("dynamic smooth 0.75", SQ / "smooth-0.75.int8.onnx")
measure("fp32", SQ / "plain" / "model.onnx")
