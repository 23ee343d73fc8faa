"""The cached name index: keyed by model and vocabulary, rebuilt when damaged, resumable."""
import numpy as np
import pandas as pd
import pytest

from codemap.embed import index as index_module
from codemap.embed import load_or_build_index
from codemap.rank import rank_hybrid
from codemap.config import RankConfig
from codemap.vocab import Vocabulary


def small_vocab(extra: str = "") -> Vocabulary:
    concepts = pd.DataFrame({"code": ["2823-3", "2951-2", "2160-0"],
                             "name": ["Potassium [Moles/volume] in Serum or Plasma",
                                      "Sodium [Moles/volume] in Serum or Plasma",
                                      "Creatinine [Mass/volume] in Serum or Plasma" + extra]})
    names = pd.concat([concepts.assign(name_type="preferred"),
                       pd.DataFrame({"code": ["2823-3", "2951-2"], "name": ["K+", "Na+"],
                                     "name_type": "synonym"})], ignore_index=True).assign(lang="en")
    return Vocabulary(id="TINY", version="1", concepts=concepts, names=names)


def test_second_load_is_a_cache_hit(tmp_path, default_encoder):
    first = load_or_build_index(small_vocab(), default_encoder, tmp_path)
    second = load_or_build_index(small_vocab(), default_encoder, tmp_path)
    assert not first.cache_hit and second.cache_hit
    assert first.folder == second.folder
    np.testing.assert_array_equal(first.vectors, second.vectors)
    changed = load_or_build_index(small_vocab(" (changed)"), default_encoder, tmp_path)
    assert changed.folder != first.folder and not changed.cache_hit


def test_damaged_cache_is_rebuilt(tmp_path, default_encoder):
    built = load_or_build_index(small_vocab(), default_encoder, tmp_path)
    np.save(built.folder / "vectors.npy", np.zeros_like(built.vectors))
    again = load_or_build_index(small_vocab(), default_encoder, tmp_path)
    assert not again.cache_hit
    np.testing.assert_allclose(again.vectors, built.vectors, atol=1e-6)


def test_interrupted_build_resumes_from_finished_chunks(tmp_path, default_encoder, monkeypatch):
    monkeypatch.setattr(index_module, "CHUNK_NAMES", 2)
    real_encode = default_encoder.encode
    calls = []

    def recording_encode(texts, fail_on_call=None, **kwargs):
        calls.append(list(texts))
        if len(calls) == fail_on_call:
            raise KeyboardInterrupt  # killed while embedding this chunk
        return real_encode(texts, **kwargs)

    monkeypatch.setattr(default_encoder, "encode",
                        lambda texts, **kw: recording_encode(texts, fail_on_call=2, **kw))
    with pytest.raises(KeyboardInterrupt):
        load_or_build_index(small_vocab(), default_encoder, tmp_path)
    calls.clear()
    monkeypatch.setattr(default_encoder, "encode", lambda texts, **kw: recording_encode(texts, **kw))
    resumed = load_or_build_index(small_vocab(), default_encoder, tmp_path)
    assert len(calls) == 2  # chunks 2 and 3 of 3; chunk 1 came from disk
    assert resumed.vectors.shape == (5, default_encoder.dim)


def test_candidates_are_distinct_concepts_scored_by_best_name(tmp_path, default_encoder):
    vocab = small_vocab()
    built = load_or_build_index(vocab, default_encoder, tmp_path)
    queries = default_encoder.encode(["K+", "serum sodium"])
    rows = [{"text": t} for t in ["K+", "serum sodium"]]
    found = rank_hybrid(built, None, vocab, queries, rows, (), RankConfig(top_k=3, method="encoder"))
    first = found[found["query"] == 0]
    assert list(first["rank"]) == [1, 2, 3] and first["target_code"].is_unique
    assert first.iloc[0]["target_code"] == "2823-3" and first.iloc[0]["matched_name"] == "K+"
    assert first.iloc[0]["score"] > 0.99
    assert found[found["query"] == 1].iloc[0]["target_code"] == "2951-2"


def test_approximate_index_above_threshold_finds_the_exact_neighbours():
    import faiss
    from codemap.config import IndexConfig
    from codemap.embed.index import build_faiss_index

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((4000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert isinstance(build_faiss_index(vectors, IndexConfig(approximate_above=5000)), faiss.IndexFlatIP)
    for config in (IndexConfig(approximate_above=1000, nprobe=256),
                   IndexConfig(approximate_above=1000, nprobe=256, float16=True)):
        index = build_faiss_index(vectors, config)
        assert isinstance(index, faiss.IndexIVF)
        _, ids = index.search(vectors[:50], 1)
        assert (ids[:, 0] == np.arange(50)).all()


def test_a_second_reading_scores_each_name_by_the_better_reading(tmp_path, default_encoder):
    """codemap.rank.prepare.with_readings: a row read two ways scores each name by the better
    of its two readings, for the encoder and the lexical score alike; rows without a second
    reading score as before."""
    from codemap.rank.lexical import load_or_build_lexical

    vocab = small_vocab()
    built = load_or_build_index(vocab, default_encoder, tmp_path)
    lexical = load_or_build_lexical(vocab, tmp_path)
    texts = ["Kreat", "Na+"]
    queries = default_encoder.encode(texts)
    plain = [{"text": t} for t in texts]
    reading = default_encoder.encode(["Kreat creatinine"])[0]
    read = [{"text": "Kreat", "reading": ("Kreat creatinine", reading)}, plain[1]]
    config = RankConfig(top_k=3, hubness=False)
    before = rank_hybrid(built, lexical, vocab, queries, plain, (), config)
    after = rank_hybrid(built, lexical, vocab, queries, read, (), config)
    creatinine = lambda f: f[(f["query"] == 0) & (f["target_code"] == "2160-0")].iloc[0]
    alone = rank_hybrid(built, lexical, vocab, reading[None, :], [{"text": "Kreat creatinine"}],
                        (), config)
    for column in ("encoder_score", "lexical_score"):
        best = max(creatinine(before)[column], creatinine(alone)[column])
        assert creatinine(after)[column] == pytest.approx(best, abs=1e-4)
    assert creatinine(after)["encoder_score"] > creatinine(before)["encoder_score"]
    assert after.iloc[0]["target_code"] == "2160-0"
    pd.testing.assert_frame_equal(before[before["query"] == 1], after[after["query"] == 1])


def test_lexical_cache_keys_on_which_names_it_reads(tmp_path):
    """The same names retyped encoder-only ("short expanded") leave their lexical rows empty,
    though the vocabulary's content hash (codes and names) is the same: no stale cached index."""
    from codemap.rank.lexical import load_or_build_lexical

    vocab = small_vocab()
    creatinine = vocab.names["name"].str.contains("reatinine").to_numpy()
    read = load_or_build_lexical(vocab, tmp_path).similarity(["creatinine"])[0]
    names = vocab.names.copy()
    names.loc[creatinine, "name_type"] = "short expanded"
    retyped = Vocabulary(vocab.id, vocab.version, vocab.concepts, names)
    assert retyped.content_hash == vocab.content_hash and retyped.typed_hash != vocab.typed_hash
    skipped = load_or_build_lexical(retyped, tmp_path).similarity(["creatinine"])[0]
    assert creatinine.any() and read[creatinine].max() > 0.5 and skipped[creatinine].max() == 0.0


def test_the_shipped_loinc_vectors_fit_the_builtin_target_and_default_model(default_encoder):
    """The README's first run embeds no target names only while the seed matches the built-in
    LOINC's names and the default model: rebuild it (recipes/build_index_seed.py) when this fails."""
    from codemap.domains import prepare_target
    from codemap.vocab.target import load_target

    vocab = prepare_target(load_target("LOINC")).vocab
    path = index_module.seed_path(vocab, default_encoder)
    assert path.exists(), f"no seed {path.name}: run recipes/build_index_seed.py"
    vectors = index_module.seeded_vectors(vocab, default_encoder)
    assert vectors is not None and vectors.shape == (len(vocab.names), default_encoder.dim)


def test_a_seed_that_does_not_fit_the_model_is_not_used(tmp_path, default_encoder, monkeypatch):
    vocab = Vocabulary("T", "1", *([pd.DataFrame({"code": ["A", "B"], "name": ["Glucose", "Sodium"],
                                                  "name_type": "", "lang": ""})] * 2))
    monkeypatch.setattr(index_module, "SEEDS", tmp_path)
    seed = default_encoder.encode(["Sodium", "Glucose"])  # the names' vectors, swapped
    np.save(index_module.seed_path(vocab, default_encoder), seed.astype(np.float16))
    assert index_module.seeded_vectors(vocab, default_encoder) is None
    np.save(index_module.seed_path(vocab, default_encoder), seed[::-1].astype(np.float16))
    index = load_or_build_index(vocab, default_encoder, tmp_path / "cache")
    assert index.shipped and np.allclose(index.vectors, seed[::-1], atol=1e-3)
