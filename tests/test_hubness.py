"""Hubness (CSLS): a concept close to many rows of the list loses half its mean best cosine to them."""
import numpy as np
import pytest

from codemap.config import MapConfig, RankConfig
from codemap.embed.index import load_or_build_index
from codemap.engines import Mapper
from codemap.rank import hubness
from codemap.rank.hubness import HUB_K, HUB_WEIGHT, ListHubness, embedded_hubness, reference_texts
from codemap.rank.hybrid import rank_hybrid
from codemap.vocab.vocabulary import load_vocab_file

from .conftest import DATA, EXAMPLES


@pytest.fixture(scope="module")
def small(default_encoder, shared_cache):
    vocab = load_vocab_file(DATA / "loinc_en_small.csv")
    return vocab, load_or_build_index(vocab, default_encoder, shared_cache)


def test_reference_rows_are_the_lists_distinct_texts_evenly_thinned():
    assert reference_texts(["Na", "K", "", "Na", "Cl"]) == ["Na", "K", "Cl"]
    texts = [f"t{i}" for i in range(100)]
    assert reference_texts(texts, limit=5) == ["t0", "t25", "t50", "t74", "t99"]
    assert reference_texts(["", ""]) == []


def test_hubness_is_each_concepts_mean_best_cosine_over_the_list(small, default_encoder,
                                                                monkeypatch):
    vocab, index = small
    monkeypatch.setattr(hubness, "_NAMES_AT_ONCE", 16)  # computed in many pieces
    texts = ["Potassium", "Sodium serum", "Glucose", "Hemoglobin A1c", "TSH", "Ferritin",
             "Creatinine urine", "ALT", "Troponin", "LDL cholesterol", "Anion gap", "Lipase"]
    vectors = default_encoder.encode(texts)
    hub = embedded_hubness(index, vocab, texts, vectors)
    # Brute force: a concept scores by its best name; r(c) = mean of its HUB_K best rows.
    codes = vocab.concepts["code"].tolist()
    names = vocab.names
    cosine = vectors @ index.vectors.T
    expected = []
    for code in codes:
        best = cosine[:, np.flatnonzero(names["code"].to_numpy() == code)].max(axis=1)
        expected.append(np.sort(best)[::-1][:HUB_K].mean())
    got = hub.of(np.arange(len(codes))[::-1])[::-1]  # any order, computed in pieces
    assert np.allclose(got, expected, atol=1e-5)
    assert np.allclose(hub.penalty(np.arange(3)), HUB_WEIGHT * np.array(expected[:3]), atol=1e-5)


def test_a_list_of_one_row_is_ranked_as_without_hubness(small, default_encoder):
    """For one row r(c) is its own cosine: cos − r/2 keeps the encoder's order."""
    vocab, index = small
    rank = RankConfig(method="encoder", top_k=5, evidence_off=("unit", "specimen"))
    query = default_encoder.encode(["cholesterol ratio"])
    hub = ListHubness(vocab, index.vectors, query)
    plain = rank_hybrid(index, None, vocab, query, [{"text": "cholesterol ratio"}], (), rank)
    corrected = rank_hybrid(index, None, vocab, query, [{"text": "cholesterol ratio"}], (), rank,
                            hub=hub)
    assert corrected["target_code"].tolist() == plain["target_code"].tolist()
    assert corrected["encoder_score"].tolist() == plain["encoder_score"].tolist()  # the cosine


def test_each_candidate_scores_its_cosine_less_half_its_hubness(small, default_encoder):
    """Ordered by cos − r(c)/2; shown lifted by the row's median candidate penalty, so a score
    keeps the plain fusion's scale; the explanation names a candidate more of a hub than that."""
    vocab, index = small
    rank = RankConfig(method="encoder", top_k=20, pool=20, evidence_off=("unit", "specimen"))
    texts = ["cholesterol", "HDL cholesterol", "triglycerides", "LDL", "glucose fasting",
             "potassium", "sodium", "creatinine", "urea nitrogen", "bilirubin total"]
    vectors = default_encoder.encode(texts)
    hub = embedded_hubness(index, vocab, texts, vectors)
    found = rank_hybrid(index, None, vocab, vectors, [{"text": t} for t in texts], (), rank, hub=hub)
    number = {code: i for i, code in enumerate(vocab.concepts["code"])}
    penalty = hub.penalty(found["target_code"].map(number).to_numpy())
    assert np.allclose(penalty, HUB_WEIGHT * hub.of(found["target_code"].map(number).to_numpy()))
    assert not np.allclose(penalty, penalty[0])  # concepts differ in hubness
    found = found.assign(penalty=penalty)
    for _, ranked in found.groupby("query"):  # each row: its whole pool, ordered by cos − p(c)
        ranked = ranked.sort_values("rank")
        corrected = ranked["encoder_score"].astype(float) - ranked["penalty"]
        assert (np.diff(corrected) <= 2e-4).all()
        shown = ranked["score"].astype(float)
        assert np.allclose(shown, corrected + np.median(ranked["penalty"]), atol=2e-4)
        hubs = ranked[ranked["penalty"] > np.median(ranked["penalty"]) + 0.01]
        assert hubs["explanation"].str.contains("hubness -").all()


def test_no_hubness_without_the_switch_or_for_the_lexical_ranking(shared_cache):
    config = MapConfig(source=EXAMPLES / "labs.csv", target="LOINC", cache_dir=shared_cache,
                       progress=False, rank=RankConfig(hubness=False))
    assert Mapper.load(config).for_list(["Sodium"]).hub is None
    lexical = MapConfig(source=EXAMPLES / "labs.csv", target="LOINC", cache_dir=shared_cache,
                        progress=False, rank=RankConfig(method="lexical"))
    assert Mapper.load(lexical).for_list(["Sodium"]).hub is None


def test_the_reference_rows_are_not_embedded_again_when_the_rows_are(shared_cache, monkeypatch):
    config = MapConfig(source=EXAMPLES / "labs.csv", target="LOINC", cache_dir=shared_cache,
                       progress=False)
    mapper = Mapper.load(config)
    texts = ["Sodium", "Potassium serum", "Hgb"]
    listed = mapper.for_list(texts)
    embedded = []
    encode = listed.ranking.encoder.encode
    monkeypatch.setattr(listed.ranking.encoder, "encode",
                        lambda t, **kw: embedded.extend(t) or encode(t, **kw))
    prepared = [listed.ranking.prepare(t) for t in texts]
    again = listed.ranking.encode(prepared + ["Chloride"])
    assert embedded == ["Chloride"]  # the three were embedded for the hubness already
    assert np.allclose(again[:3], encode(prepared), atol=1e-5)
