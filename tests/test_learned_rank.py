"""The learned ranker with the real default model on a small real HPO table (lay phrases → HPO):
pseudo-queries mask their own name, the fitted model is cached, scorers become features, every
target gets a confidence, and `codemap eval --folds` cross-validates through the CLI."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import RankConfig
from codemap.decide.learned import LearnedRanker, fit, load_or_fit, ranker_folder
from codemap.embed.index import load_or_build_index
from codemap.domains.evidence import Evidence
from codemap.rank.learned import FitConfig, Queries, Target, feature_names, pool
from codemap.rank.lexical import load_or_build_lexical
from codemap.rank.pseudo_queries import draw
from codemap.vocab.vocabulary import load_vocab_file

REPO = Path(__file__).resolve().parents[1]
HPO = REPO / "benchmarks" / "data"
SMALL = FitConfig(pseudo_queries=240, rounds=30)


@pytest.fixture(scope="module")
def hpo_files(tmp_path_factory):
    """40 dev lay phrases and a target of their terms plus 260 others (with their synonyms)."""
    folder = tmp_path_factory.mktemp("hpo")
    dev = pd.read_csv(HPO / "hpo_lay_dev.tsv", sep="\t", dtype=str).head(40)
    target = pd.read_csv(HPO / "hpo_lay_target.csv", dtype=str).fillna("")
    keep = target["code"].isin(dev["hpo_id"]) | target.index.isin(range(1000, 1260))
    target[keep].to_csv(folder / "target.csv", index=False)
    dev.to_csv(folder / "dev.tsv", sep="\t", index=False)
    return folder / "dev.tsv", folder / "target.csv"


@pytest.fixture(scope="module")
def target(hpo_files, default_encoder, shared_cache):
    vocab = load_vocab_file(hpo_files[1])
    index = load_or_build_index(vocab, default_encoder, shared_cache)
    return Target(vocab, default_encoder, index, load_or_build_lexical(vocab, shared_cache), "en",
                  shared_cache)


def test_pseudo_queries_mask_their_own_name(target):
    drawn = [p for p in draw(target.vocab, 200, seed=0) if len(p.hidden)]
    assert drawn, "the table has concepts with synonyms"
    names = target.vocab.names
    verbatim = [p for p in drawn if p.text in set(names.loc[p.hidden, "name"])]
    assert verbatim and all(names.loc[p.hidden, "code"].eq(p.code).all() for p in drawn)
    vectors = target.encoder.encode([p.text for p in verbatim])
    rows = [{"text": p.text} for p in verbatim]
    masked = pool(target, Queries(rows, vectors, [p.hidden for p in verbatim]), [], RankConfig())
    unmasked = pool(target, Queries(rows, vectors), [], RankConfig())

    def own_encoder(table):
        gold = [p.code for p in verbatim]
        hit = table[[code == gold[q] for q, code in zip(table["query"], table["target_code"])]]
        return hit["encoder"].to_numpy(float)

    # Without the mask the query meets itself (cosine 1.0); with it, only its other names.
    assert (own_encoder(unmasked) > 0.999).all()
    assert (own_encoder(masked) < 0.999).mean() > 0.9


class WordCountScorer:
    """A scorer added at run time: names as long as the query get a small bonus."""

    name = "same_length"

    def score(self, row, concept):
        same = len(str(row["text"]).split()) == len(str(concept["name"]).split())
        return Evidence(0.01, "same length") if same else Evidence()


def test_run_time_scorer_becomes_a_feature(target):
    scorers = [WordCountScorer()]
    assert "evidence:same_length" in feature_names(scorers)
    ranker = fit(target, scorers, RankConfig(), SMALL)
    assert ranker.features[-1] == "evidence:same_length"
    texts = ["Protein in urine", "Short stature"]
    table = pool(target, Queries([{"text": t} for t in texts], target.encoder.encode(texts)),
                 scorers, RankConfig())
    assert table["evidence:same_length"].isin([0.0, 0.01]).all()
    assert (table["evidence:same_length"] > 0).any()


def test_fitted_ranker_is_cached_and_reloaded(target):
    first = load_or_fit(target, [], RankConfig(), SMALL)
    folder = ranker_folder(target, [], RankConfig(), SMALL)
    assert (folder / "model.txt").exists() and (folder / "ranker.json").exists()
    again = LearnedRanker.load(folder)
    texts = ["Protein in urine", "Short stature", "Big head"]
    table = pool(target, Queries([{"text": t} for t in texts], target.encoder.encode(texts)), [],
                 RankConfig())
    np.testing.assert_allclose(first.score(table), again.score(table))
    ranked = again.rank(table, 5)
    np.testing.assert_allclose(first.rank(table, 5)["confidence"], ranked["confidence"])
    assert ranked["confidence"].between(0, 1).all() and (ranked.groupby("query").size() == 5).all()


def test_map_writes_confidence_for_a_table_target(hpo_files, tmp_path, shared_cache):
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["map", str(hpo_files[0]), "--target", str(hpo_files[1]),
                                      "--text-col", "lay_phrase", "--learned-ranking", "-o", str(out), "--cache-dir",
                                      str(shared_cache), "--quiet"])
    assert result.exit_code == 0, result.output
    mapped = pd.read_csv(out, dtype=str)
    conf = mapped["confidence"].astype(float)
    assert conf.between(0, 1).all() and conf.nunique() > 5
    assert mapped["explanation"].str.startswith("learned").all()


def test_map_keeps_the_fixed_ranking_by_default(hpo_files, tmp_path, shared_cache):
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(app, ["map", str(hpo_files[0]), "--target", str(hpo_files[1]),
                                      "--text-col", "lay_phrase", "-o", str(out), "--cache-dir",
                                      str(shared_cache), "--quiet"])
    assert result.exit_code == 0, result.output
    mapped = pd.read_csv(out, dtype=str)
    assert not mapped["explanation"].str.startswith("learned").any()


def test_eval_folds_through_the_cli(hpo_files, shared_cache):
    result = CliRunner().invoke(app, ["eval", str(hpo_files[0]), "--target", str(hpo_files[1]),
                                      "--gold-col", "hpo_id", "--text-col", "lay_phrase",
                                      "--folds", "3", "--cache-dir", str(shared_cache), "-q"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "learned (opt-in)" in result.output and "3-fold cross-validation" in result.output
    assert "learned (default)" not in result.output
    assert "conf AUROC" in result.output
