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
    from codemap.encoder import Encoder

    return Encoder.load()


@pytest.fixture(autouse=True)
def _isolated_cache(monkeypatch, tmp_path):
    # Commands that fall back to the default cache folder must not write to the user's home.
    monkeypatch.setenv("CODEMAP_CACHE_DIR", str(tmp_path / "cache"))
