"""int8 quantisation experiments on an export of the default model (README, "int8 accuracy
experiments"): parity metrics of each config against torch on all 4,739 built-in LOINC names.

    codemap export default --out /tmp/minilm        # the plain fp32 graph to quantise
    OMP_NUM_THREADS=1 python benchmarks/int8/int8_experiments.py /tmp/minilm [A C F ...]

MatMulNBits (H, I) needs `pip install onnx-ir`. Speeds in the README come from interleaved
passes of `Encoder.encode` over `codemap.embed.bench.bench_terms(2000)` with each file.
"""
import dataclasses, json, logging, sys, time
from pathlib import Path
import numpy as np
from codemap.config import EncoderConfig
from codemap.embed import Encoder
from codemap.embed import resolve_model
from codemap.export import parity
from onnxruntime.quantization import QuantType, quantize_dynamic
from onnx import TensorProto
import onnx
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 1)


EXP = Path(ARGS[0]); Q = EXP / "int8-experiments"; Q.mkdir(exist_ok=True)
terms = parity.loinc_terms()
ref_path = Q / "torch.npy"
cfg = EncoderConfig(device="cpu", batch_size=64)
if not ref_path.exists():
    np.save(ref_path, Encoder(resolve_model("default"), cfg).encode(terms.all))
ref = np.load(ref_path)
info = resolve_model(str(EXP))
raw = EXP / "model.onnx"
names = [n.name for n in onnx.load(str(raw)).graph.node if n.op_type == "MatMul"]
act = [n for n in names if n.endswith("/self/MatMul") or n.endswith("/self/MatMul_1")]
ffn_out = [n for n in names if n.endswith("/output/dense/MatMul") and "attention" not in n]
attn_out = [n for n in names if "attention/output/dense" in n]
l0 = [n for n in names if "layer.0/" in n]; l5 = [n for n in names if "layer.5/" in n]

def dyn(name, source=None, ops=("MatMul",), **kw):
    target = Q / f"{name}.onnx"
    if not target.exists():
        logging.disable(logging.WARNING)
        extra = {"DefaultTensorType": TensorProto.FLOAT, **kw.pop("extra", {})}
        quantize_dynamic(str(source or raw), str(target), op_types_to_quantize=list(ops),
                         extra_options=extra, **kw)
        logging.disable(logging.NOTSET)
    return target

def fused_qattention(name):
    # onnxruntime's BERT fusions (Attention, SkipLayerNorm, BiasGelu), then int8 QAttention too
    target = Q / f"{name}.onnx"
    if not target.exists():
        from codemap.export import convert
        fused = Q / "fused.onnx"
        convert.optimize_graph(raw, fused, convert.load_checkpoint(resolve_model("default"))[0].config)
        dyn(name, source=fused, ops=("MatMul", "Attention"), weight_type=QuantType.QInt8, per_channel=True)
    return target

def nbits(name, bits=8, block=32, level=None):
    # accuracy_level 4: activations quantised to int8 per block of `block` inputs, int8 maths
    target = Q / f"{name}.onnx"
    if not target.exists():
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        m = onnx.load(str(raw))
        qz = MatMulNBitsQuantizer(m, bits=bits, block_size=block, is_symmetric=True, accuracy_level=level)
        qz.process()
        qz.model.save_model_to_file(str(target), use_external_data_format=False)
    return target

configs = {
  "A per-channel QInt8 all MatMul (shipped)": lambda: dyn("A", weight_type=QuantType.QInt8, per_channel=True),
  "B A minus attention-score MatMuls": lambda: dyn("B", weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=act),
  "C B minus FFN output dense": lambda: dyn("C", weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=act+ffn_out),
  "D B + reduce_range": lambda: dyn("D", weight_type=QuantType.QInt8, per_channel=True, reduce_range=True, nodes_to_exclude=act),
  "E B with QUInt8 weights": lambda: dyn("E", weight_type=QuantType.QUInt8, per_channel=True, nodes_to_exclude=act),
  "F B minus first+last layer": lambda: dyn("F", weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=act+l0+l5),
  "G B minus attention output dense": lambda: dyn("G", weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=act+attn_out),
  "H MatMulNBits 8-bit block 32 (weight-only)": lambda: nbits("H", 8, 32),
  "I MatMulNBits 8-bit block 128": lambda: nbits("I", 8, 128),
  "K fused graph, MatMul + Attention (QAttention) int8": lambda: fused_qattention("K"),
  "L MatMulNBits 8-bit block 128, int8 activations per block": lambda: nbits("L", 8, 128, level=4),
  "J fp32 (reference)": lambda: raw,
}
only = ARGS[1:]
for label, make in configs.items():
    if only and label[0] not in only: continue
    try:
        path = make()
    except Exception as e:
        print(json.dumps({"config": label, "error": repr(e)[:300]}), flush=True); continue
    enc = Encoder(dataclasses.replace(info, onnx_file=str(path)), cfg)
    enc.encode(terms.all[:200])
    t = time.perf_counter(); vec = enc.encode(terms.all); s = time.perf_counter() - t
    r = parity.compare(ref, vec, terms)
    print(json.dumps({"config": label, "terms_per_s": round(len(terms.all) / s), "size_mb": round(path.stat().st_size/2**20,1),
                      **{k: round(v, 4) for k, v in r.items() if isinstance(v, float)}}), flush=True)
