"""Shared fixtures. Tests stay off the network and never touch the user's cache."""
import os
from pathlib import Path

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One index cache for the whole session: the default model's LOINC index is built once."""
    return tmp_path_factory.mktemp("codemap-cache")


@pytest.fixture(scope="session")
def default_encoder():
    """The real shipped default model (all-MiniLM-L6-v2), loaded once per session."""
    from codemap.embed import Encoder

    return Encoder.load()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A random 2-layer BERT with the default model's fast tokenizer (mechanics only)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from codemap.embed import default_model_path

    folder = tmp_path_factory.mktemp("tiny-bert")
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=64)
    torch.manual_seed(0)
    transformers.BertModel(config).eval().save_pretrained(folder)
    transformers.AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory) -> Path:
    """One model cache for the whole session: `--backend auto` exports the default model to ONNX
    once (codemap.embed.onnx_cache), however many tests and index caches use it."""
    folder = tmp_path_factory.mktemp("model-cache")
    previous = os.environ.get("CODEMAP_MODEL_CACHE")
    os.environ["CODEMAP_MODEL_CACHE"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("CODEMAP_MODEL_CACHE", None)
    else:
        os.environ["CODEMAP_MODEL_CACHE"] = previous


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch, tmp_path):
    # Commands that fall back to the default cache folder must not write to the user's home.
    monkeypatch.setenv("CODEMAP_CACHE_DIR", str(tmp_path / "cache"))


def small_target(folder: Path, names: list[str]) -> tuple[Path, Path]:
    """A target file of codes T1, T2… named `names`, and an index cache folder beside it: a
    target a CLI test indexes in seconds."""
    import pandas as pd

    target = folder / "target.csv"
    pd.DataFrame({"code": [f"T{n}" for n in range(1, len(names) + 1)],
                  "name": names}).to_csv(target, index=False)
    return target, folder / "cache"
