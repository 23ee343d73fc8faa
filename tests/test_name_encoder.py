"""A large target's names are embedded by the model's int8 export cut to 24 tokens, its rows by
the model itself (codemap.embed.name_encoder, issue #53): chosen only on CPU with `--backend
auto`, keyed apart in the index cache, the same for `vocab embed` and `map`, and the model
itself again when the int8 export cannot be made."""
import logging

import numpy as np
import pytest

from codemap.domains import prepare_target
from codemap.config import EncoderConfig, IndexConfig, RankConfig
from codemap.embed import Encoder
from codemap.embed.index import index_folder
from codemap.embed.name_encoder import NAME_TOKENS, name_encoder, name_encoder_config
from codemap.engines.ray import embed_vocabulary
from codemap.rank.assembly import Ranking
from codemap.vocab import load_target
from .conftest import DATA

pytest.importorskip("torch")
pytest.importorskip("onnx")

TARGET = DATA / "loinc_en_small.csv"  # 150 LOINC codes with synonyms
LARGE = IndexConfig(int8_names_above=10)  # the small target counts as large here


def test_only_a_large_target_on_cpu_with_backend_auto_gets_int8_names(tiny_model, tmp_path):
    model = Encoder.load(EncoderConfig(model=str(tiny_model)), tmp_path)
    assert name_encoder_config(model, 10, LARGE) is None  # not above the threshold
    wanted = name_encoder_config(model, 11, LARGE)
    assert (wanted.backend, wanted.max_length, wanted.model) == ("int8", NAME_TOKENS, str(tiny_model))
    asked = Encoder.load(EncoderConfig(model=str(tiny_model), backend="onnx"), tmp_path)
    assert name_encoder_config(asked, 11, LARGE) is None  # an explicit backend is kept
    names = name_encoder(model, 11, LARGE, tmp_path)
    assert (names.variant, names.info.max_length) == ("onnx-int8", NAME_TOKENS)
    vocab = load_target(str(TARGET), store_dir=tmp_path / "store")
    assert index_folder(tmp_path, vocab, names) != index_folder(tmp_path, vocab, model)
    # The cut is real: a long name's vector is its first 24 tokens' vector.
    long = "glucose " * 40
    cut = names._backend.tokenizer.decode(names._backend.tokenizer.encode(long).ids[1:NAME_TOKENS - 1])
    assert np.allclose(names.encode([long]), names.encode([cut]), atol=1e-5)


def test_map_ranks_rows_of_the_model_against_int8_names_and_says_so(tiny_model, tmp_path):
    config = EncoderConfig(model=str(tiny_model))
    ranking, _ = Ranking.load(str(TARGET), RankConfig(hubness=False), encoder=config,
                              cache_dir=tmp_path / "c", index_config=LARGE)
    assert "names embedded by its int8 export cut to 24 tokens" in ranking.index_choice
    assert ranking.encoder.variant == "onnx-fp32"  # the rows
    names = Encoder.load(EncoderConfig(model=str(tiny_model), backend="int8",
                                       max_length=NAME_TOKENS), tmp_path / "c")
    first = ranking.vocab.names["name"].tolist()[:5]
    # The index is the int8 encoder's (its cache folder; int8 activations are quantised per
    # batch, so its vectors are close to a re-embedding, not equal).
    assert ranking.index.folder == index_folder(tmp_path / "c", ranking.vocab, names)
    assert np.abs(ranking.index.vectors[:5] - names.encode(first)).max() < 1e-3
    rows, vectors = ranking.embed([{"text": "Glucose serum"}], ["Glucose serum"])
    assert len(ranking.rank(vectors, rows))


def test_vocab_embed_builds_the_index_map_then_loads(tiny_model, tmp_path):
    # the vocabulary as `codemap vocab embed` hands it over: prepared by its domain
    vocab = prepare_target(load_target(str(TARGET), store_dir=tmp_path / "store")).vocab
    config = EncoderConfig(model=str(tiny_model))
    done = embed_vocabulary(vocab, config, tmp_path / "c", index_config=LARGE)
    assert done["kind"] == "full" and not done["cache_hit"]
    ranking, _ = Ranking.load(str(TARGET), RankConfig(hubness=False), encoder=config,
                              cache_dir=tmp_path / "c", index_config=LARGE)
    assert ranking.index.cache_hit and str(ranking.index.folder) == done["folder"]


def test_without_an_int8_export_the_model_embeds_the_names(tiny_model, tmp_path, monkeypatch, caplog):
    from codemap.export import parity

    monkeypatch.setenv("CODEMAP_MODEL_CACHE", str(tmp_path / "models"))  # no int8 export yet
    monkeypatch.setattr(parity, "MAX_ACCURACY_DROP", -1.0)  # every int8 variant now fails
    model = Encoder.load(EncoderConfig(model=str(tiny_model)), tmp_path)
    with caplog.at_level(logging.WARNING):
        assert name_encoder(model, 11, LARGE, tmp_path) is model
    assert "embedded by the model itself" in caplog.text and "no int8 variant" in caplog.text


def test_texts_the_model_reads_the_same_are_embedded_once(tiny_model, tmp_path):
    """Names that differ only past the cut (a large target's long titles) cost one embedding."""
    encoder = Encoder.load(EncoderConfig(model=str(tiny_model), max_length=8), tmp_path)
    calls = []
    embed = encoder._backend.embed
    encoder._backend.embed = lambda texts: calls.append(list(texts)) or embed(texts)
    texts = ["fracture of shaft of right femur, initial encounter",
             "fracture of shaft of right femur, subsequent encounter",  # equal in 8 tokens
             "glucose", "glucose", "sodium"]
    vectors = encoder.encode(texts)
    assert sum(len(c) for c in calls) == 3
    assert np.array_equal(vectors[0], vectors[1]) and np.array_equal(vectors[2], vectors[3])
    assert not np.allclose(vectors[0], vectors[4])
    whole = Encoder.load(EncoderConfig(model=str(tiny_model)), tmp_path)  # read to 32 tokens
    assert not np.allclose(*whole.encode(texts[:2]))


def test_a_list_taking_the_two_stages_makes_no_int8_export(tiny_model, tmp_path, monkeypatch):
    """The two stages embed pooled names with the model itself: they ask for the name encoder
    only to find a full index `vocab embed` built ahead, which needs its export, so none is made
    for them; once one exists it is found."""
    monkeypatch.setenv("CODEMAP_MODEL_CACHE", str(tmp_path / "models"))  # no export made before
    model = Encoder.load(EncoderConfig(model=str(tiny_model)), tmp_path)
    exports = lambda: sorted((tmp_path / "models" / "onnx").iterdir())
    fp32_only = exports()
    assert name_encoder(model, 11, LARGE, tmp_path, made_only=True) is model
    assert exports() == fp32_only  # no int8 export made
    made = name_encoder(model, 11, LARGE, tmp_path)  # a full index asks for it: made
    assert made.variant == "onnx-int8"
    assert name_encoder(model, 11, LARGE, tmp_path, made_only=True).variant == "onnx-int8"
