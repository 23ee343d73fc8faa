"""Quantisation-aware distillation for the int8 export (README, "int8 accuracy experiments").

Can fine-tuning close the gap between the shipped int8 variant and torch? The student is the
smoothed default model (export/smooth.py) whose encoder Linears compute in fake-quant exactly the
arithmetic of onnxruntime's dynamic int8 MatMul: activations per tensor, asymmetric uint8, range
over the whole padded batch; weights per output channel, symmetric int8. It is trained to give the
fp32 teacher's embeddings (1 − cosine, plus the in-batch similarity matrix so rankings keep their
shape), then exported and quantised by the same `convert.quantize_int8` as the export.

    OMP_NUM_THREADS=2 python benchmarks/int8/int8_qat.py OUT STEPS [LR]     # README: 1000 steps, 1e-5

Training text (dev data, ../shared/): LOINC short names of codes outside the parity subset, ICD-10-CM
titles and OMOP drug names — the same domains as the parity check, none of its names. Metrics:
export/parity.py against torch on the 4,739 built-in LOINC names, as int8_experiments.py.
"""
import copy
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from codemap.config import EncoderConfig
from codemap.embed import Encoder, pool
from codemap.export import ExportConfig, convert, export_model, parity
from codemap.export.smooth import ALPHA, SmoothedLinear, calibration_texts, smooth_linears
from codemap.embed import resolve_model
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: usage
from usage import positional  # noqa: E402

ARGS = positional(__doc__, 2)


SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
BATCH, SEED = 64, 0


def fake_act(x):
    """onnxruntime DynamicQuantizeLinear: uint8, one scale and zero point per tensor, 0 in range."""
    low = x.detach().min().clamp(max=0.0)
    high = x.detach().max().clamp(min=0.0)
    scale = float(((high - low) / 255.0).clamp(min=1e-8))
    zero = int(torch.round(-low / scale).clamp(0, 255))
    return torch.fake_quantize_per_tensor_affine(x, scale, zero, 0, 255)


def fake_weight(w):
    """Per-channel symmetric int8 of a (out, in) weight: one scale per output channel."""
    scale = (w.detach().abs().amax(dim=1) / 127.0).clamp(min=1e-8)
    zero = torch.zeros_like(scale, dtype=torch.int32)
    return torch.fake_quantize_per_channel_affine(w, scale, zero, 0, -127, 127)


class FakeInt8Linear(torch.nn.Module):
    def __init__(self, linear: torch.nn.Linear):
        super().__init__()
        self.linear = linear

    def forward(self, x):
        return torch.nn.functional.linear(fake_act(x), fake_weight(self.linear.weight), self.linear.bias)


def set_fake_quant(model, on: bool) -> None:
    for module in model.modules():
        if isinstance(module, SmoothedLinear):
            inner = module.linear.linear if isinstance(module.linear, FakeInt8Linear) else module.linear
            module.linear = FakeInt8Linear(inner) if on else inner


def training_texts(exclude: set[str], rng: random.Random) -> list[str]:
    short = pd.read_csv(SHARED / "loinc-shortnames" / "loinc_shortnames.tsv", sep="\t", header=None)[1]
    icd = pd.read_csv(SHARED / "icd10cm-2021" / "icd10cm_codes_2021.csv")["description"]
    drugs = pd.read_csv(SHARED / "ohdsi-mimic-drugs" / "target_drug_concepts.tsv", sep="\t")
    drugs = drugs[[c for c in drugs.columns if "name" in c][0]]
    short = [t for t in short.dropna() if t not in exclude]
    texts = (rng.sample(short, min(20000, len(short))) + rng.sample(icd.dropna().tolist(), 10000)
             + rng.sample(drugs.dropna().tolist(), min(5000, len(drugs))))
    return sorted(set(texts), key=lambda t: (len(t), t))  # length buckets, as the runtime batches


def main(out: Path, steps: int, lr: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    info = resolve_model("default")
    teacher, tokenizer = convert.load_checkpoint(info)
    student = copy.deepcopy(teacher)
    smooth_linears(student, tokenizer, calibration_texts(), ALPHA, info.max_length)
    set_fake_quant(student, True)
    terms = parity.loinc_terms()
    texts = training_texts(set(terms.queries) | set(terms.corpus), rng)
    batches = [texts[i:i + BATCH] for i in range(0, len(texts), BATCH)]

    def embed(model, batch):
        enc = tokenizer(batch, padding=True, truncation=True, max_length=info.max_length,
                        return_tensors="pt")
        hidden = model(**enc).last_hidden_state
        return torch.nn.functional.normalize(pool(hidden, enc["attention_mask"], info.pooling), dim=-1)

    params = [p for name, p in student.named_parameters() if "embeddings" not in name]
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / 50) * max(0.0, 1 - s / steps))
    student.eval()  # no dropout: the runtime is deterministic
    started, losses = time.perf_counter(), []
    for step in range(steps):
        batch = rng.choice(batches)
        with torch.no_grad():
            target = embed(teacher, batch)
        vectors = embed(student, batch)
        distance = (1 - (vectors * target).sum(-1)).mean()
        shape = ((vectors @ vectors.T) - (target @ target.T)).pow(2).mean()
        optimizer.zero_grad()
        (distance + shape).backward()
        optimizer.step()
        schedule.step()
        losses.append(distance.item())
        if step % 100 == 0 or step == steps - 1:
            print(json.dumps({"step": step, "one_minus_cos": round(float(np.mean(losses[-100:])), 6),
                              "seconds": round(time.perf_counter() - started)}), flush=True)
    set_fake_quant(student, False)
    convert.export_fp32(student, info, out / "student.onnx")
    convert.quantize_int8(out / "student.onnx", out / "student.int8.onnx")
    report(out, info, terms, steps, lr, time.perf_counter() - started)


def report(out: Path, info, terms, steps: int, lr: float, seconds: float) -> None:
    import dataclasses
    shipped = out / "shipped"
    if not (shipped / "codemap.json").exists():
        export_model(ExportConfig(model="default", out=shipped, int8=True))
    base = resolve_model(str(shipped))
    config = EncoderConfig(device="cpu", batch_size=BATCH)
    reference = Encoder(info, config).encode(terms.all)
    for label, path in [("shipped int8", shipped / "model.int8.onnx"),
                        ("distilled fp32", out / "student.onnx"),
                        ("distilled int8", out / "student.int8.onnx")]:
        vectors = Encoder(dataclasses.replace(base, onnx_file=str(path)), config).encode(terms.all)
        result = parity.compare(reference, vectors, terms)
        print(json.dumps({"config": label, "steps": steps, "lr": lr, "train_s": round(seconds),
                          **{k: round(v, 4) for k, v in result.items() if isinstance(v, float)}}),
              flush=True)


if __name__ == "__main__":
    main(Path(ARGS[0]), int(ARGS[1]), float(ARGS[2]) if len(ARGS) > 2 else 1e-5)
