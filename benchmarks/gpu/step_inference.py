"""Step 3: how fast the default model embeds terms on the GPU, and how close its vectors stay to
CPU fp32.

Terms: real names from the carried graph (prepare_carry.py), with the model's "query: " prefix,
at its 32 tokens, mean-pooled and normalised as codemap embeds them. Each way of running is timed
over repeated passes for GPU_INFERENCE_SECONDS after a warm-up pass, end to end (tokenise, run,
pool, copy back) and with the tokenising done beforehand (the model alone):

- `codemap-torch-fp32`: codemap's own TorchBackend on the GPU (what `--backend torch --device
  cuda` runs today: fp32), batch 256;
- `torch-bf16`, `torch-fp16`: the same weights cast, inputs sorted by length, batch 256 and 1024;
- `onnx-cuda-fp32`, `onnx-cuda-fp16`: codemap's export (export/convert.py) on onnxruntime's
  CUDAExecutionProvider, when this onnxruntime has it (the image's is expected to be CPU-only:
  the step then says so and moves on).

Parity: every way's vectors of the first GPU_INFERENCE_PARITY terms against codemap's
TorchBackend on the CPU in fp32: lowest and mean cosine.
"""
from __future__ import annotations

import time

import numpy as np

from harness import Context, Recorder, cuda_sync


def terms_from_carry(ctx: Context, count: int) -> list[str]:
    """`count` distinct real names from the carried graph, in a seeded order."""
    with np.load(ctx.carry / "kg.npz") as data:
        names = sorted(set(bytes(data["names"]).decode("utf-8").split("\n")) - {""})
    order = np.random.default_rng(0).permutation(len(names))[:count]
    return [names[i] for i in order]


def _timed(embed, texts, batch: int, seconds: float, device: str) -> tuple[float, np.ndarray]:
    """terms/s of `embed` over `texts` in batches, passes repeated until `seconds` (after one
    warm-up batch); returns (terms/s, vectors of one pass)."""
    embed(texts[:batch])
    cuda_sync(device)
    done, passes, started = 0, 0, time.time()
    vectors = None
    while True:
        out = [embed(texts[i:i + batch]) for i in range(0, len(texts), batch)]
        cuda_sync(device)
        done += len(texts)
        passes += 1
        if vectors is None:
            vectors = np.concatenate(out)
        if time.time() - started >= seconds:
            break
    return done / (time.time() - started), vectors


def _cosines(a: np.ndarray, b: np.ndarray) -> dict:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    cos = np.sum(a * b, axis=1)
    return {"min_cosine": round(float(cos.min()), 6), "mean_cosine": round(float(cos.mean()), 6),
            "terms": len(cos)}


class TorchCast:
    """The model in bf16 or fp16: a batch sorted by length, run, mean-pooled, normalised."""

    def __init__(self, folder, dtype, device, max_length: int, prefix: str):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.torch, self.device, self.max_length, self.prefix = torch, device, max_length, prefix
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModel.from_pretrained(str(folder), dtype=dtype).to(device).eval() \
            if _has_dtype_arg() else AutoModel.from_pretrained(str(folder)).to(device, dtype).eval()

    def tokens(self, texts):
        return self.tokenizer([self.prefix + t for t in texts], padding=True, truncation=True,
                              max_length=self.max_length, return_tensors="pt")

    def vectors(self, batch):
        """A tokenised batch → normalised float32 vectors, left on the device."""
        torch = self.torch
        with torch.inference_mode():
            ids = batch["input_ids"].to(self.device, non_blocking=True)
            mask = batch["attention_mask"].to(self.device, non_blocking=True)
            hidden = self.model(input_ids=ids, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1)
            return torch.nn.functional.normalize(pooled.float(), dim=-1)

    def run(self, batch) -> np.ndarray:
        return self.vectors(batch).cpu().numpy()

    def embed(self, texts) -> np.ndarray:
        return self.run(self.tokens(texts))


def _has_dtype_arg() -> bool:
    # transformers 5 takes `dtype=` (torch_dtype is deprecated there); 4.x only torch_dtype.
    import transformers

    return int(transformers.__version__.split(".")[0]) >= 5


def _sorted(texts: list[str]) -> tuple[list[str], np.ndarray]:
    order = np.argsort([len(t) for t in texts], kind="stable")
    return [texts[i] for i in order], order


def run(ctx: Context, record: Recorder) -> dict:
    import torch

    from codemap.config import EncoderConfig
    from codemap.embed.manifest import read_manifest
    from codemap.embed.torch_backend import TorchBackend

    device = ctx.device
    if not device.startswith("cuda"):
        torch.set_num_threads(ctx.knob("threads", 1, 1))
    info = read_manifest(ctx.model, "default")
    terms = terms_from_carry(ctx, ctx.knob("inference_terms", 32768, 256))
    parity_n = min(len(terms), ctx.knob("inference_parity", 2048, 64))
    seconds = ctx.knob("inference_seconds", 3.0, 0.5)
    results = {"terms": len(terms), "parity_terms": parity_n, "ways": {}}

    # The reference: codemap's torch backend on the CPU in fp32, every CPU thread.
    threads = torch.get_num_threads()
    if device.startswith("cuda"):
        torch.set_num_threads(max(1, __import__("os").cpu_count() or 1))
    started = time.time()
    cpu = TorchBackend(info, EncoderConfig(device="cpu"))
    chunks, give_up = [], started + 0.25 * ctx.left()  # a slow CPU gets a smaller parity sample
    for i in range(0, parity_n, 256):
        chunks.append(cpu.embed([info.prefix + t for t in terms[i:min(i + 256, parity_n)]]))
        if time.time() > give_up:
            break
    reference = np.concatenate(chunks)
    parity_n = results["parity_terms"] = len(reference)
    results["cpu_fp32_reference"] = {"seconds": round(time.time() - started, 1),
                                     "terms_per_s": round(parity_n / (time.time() - started), 1),
                                     "threads": torch.get_num_threads()}
    del cpu
    torch.set_num_threads(threads)
    record.update(**results)

    def add(name: str, batch: int, embed, tokens=None, run=None):
        if ctx.left() < seconds * 2 + 5:
            results["ways"][f"{name}@{batch}"] = {"skipped": f"{ctx.left():.0f} s left"}
            return
        rate, vectors = _timed(embed, texts_sorted, batch, seconds, device)
        entry = {"batch": batch, "terms_per_s": round(rate, 1)}
        if tokens is not None:  # the model alone: every batch tokenised beforehand
            batches = [tokens(texts_sorted[i:i + batch]) for i in range(0, len(texts_sorted), batch)]
            run(batches[0])
            cuda_sync(device)
            started, done = time.time(), 0
            while time.time() - started < seconds:
                for b in batches:
                    run(b)
                done += len(texts_sorted)
            cuda_sync(device)
            entry["model_only_terms_per_s"] = round(done / (time.time() - started), 1)
        restored = np.empty_like(vectors)
        restored[order] = vectors
        entry.update(_cosines(restored[:parity_n], reference))
        results["ways"][f"{name}@{batch}"] = entry
        print(f"inference {name}@{batch} {entry}", flush=True)
        record.update(**results)

    texts_sorted, order = _sorted(terms)
    def codemap_backend():  # in its own scope, so that its model is freed after
        backend = TorchBackend(info, EncoderConfig(device=device))
        add("codemap-torch-fp32", 256, lambda texts: backend.embed([info.prefix + t for t in texts]))

    codemap_backend()
    for dtype_name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        model = TorchCast(ctx.model, dtype, device, info.max_length, info.prefix)
        for batch in (256, 1024):
            add(f"torch-{dtype_name}", batch, model.embed, model.tokens, model.run)
        del model
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    try:
        results["onnx"] = onnx_ways(ctx, info, add)
    except Exception as exc:  # optional: onnxruntime's CUDA libraries may not load; a finding
        results["onnx"] = {"failed": f"{type(exc).__name__}: {exc}"[:1000]}
    record.update(**results)
    return results


def onnx_ways(ctx: Context, info, add) -> dict:
    """codemap's ONNX export on onnxruntime's CUDA provider, when there is one."""
    import onnxruntime as ort

    providers = ort.get_available_providers()
    use = "CUDAExecutionProvider"
    if use not in providers:
        if not ctx.knob("inference_ort_cpu", False, True):
            return {"providers": providers,
                    "skipped": "onnxruntime here has no CUDAExecutionProvider (CPU-only build)"}
        use = "CPUExecutionProvider"  # a rehearsal runs the same code on the CPU provider
    if ctx.left() < 20:
        return {"providers": providers, "skipped": f"{ctx.left():.0f} s left"}
    from codemap.export.convert import convert_fp16, export_fp32, load_checkpoint

    folder = ctx.work / "onnx"
    folder.mkdir(parents=True, exist_ok=True)
    started = time.time()
    model, tokenizer = load_checkpoint(info)
    export_fp32(model, info, folder / "model.onnx")
    done = {"providers": providers, "provider": use, "export_s": round(time.time() - started, 1)}
    files = {"fp32": folder / "model.onnx"}
    convert_fp16(folder / "model.onnx", folder / "model_fp16.onnx")  # a rehearsal converts too
    done["fp16_convert_s"] = round(time.time() - started - done["export_s"], 1)
    if use == "CUDAExecutionProvider":  # fp16 kernels: the GPU's; the CPU provider lacks most
        files["fp16"] = folder / "model_fp16.onnx"
    for name, path in files.items():
        session = ort.InferenceSession(str(path), providers=[use])
        # a CUDA provider that cannot load its libraries falls back to the CPU without failing
        done[f"{name}_session_providers"] = session.get_providers()

        def embed(texts, session=session):
            batch = tokenizer([info.prefix + t for t in texts], padding=True, truncation=True,
                              max_length=info.max_length, return_tensors="np")
            feed = {"input_ids": batch["input_ids"].astype(np.int64),
                    "attention_mask": batch["attention_mask"].astype(np.int64)}
            return session.run(None, feed)[0].astype(np.float32)

        for batch in (256, 1024):
            add(f"onnx-{'cuda' if use.startswith('CUDA') else 'cpu'}-{name}", batch, embed)
    del model
    return done
