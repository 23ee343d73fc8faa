"""A large target in two stages (codemap.rank.two_stage): a static embedding distilled from the
real model and the lexical index pool each row's candidates, the model embeds only the pooled
names, once across runs."""
import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import EncoderConfig, IndexConfig, RankConfig
from codemap.embed.static import StaticEmbedder
from codemap.rank.assembly import Ranking
from .conftest import DATA

TARGET = DATA / "loinc_long_names.tsv"  # 2,377 real LOINC long names
ROWS = ["Glucose [Mass/volume] in Serum or Plasma", "Potassium serum", "Hemoglobin blood",
        "Sodium [Moles/volume] in Urine"]


def test_the_static_stage_finds_a_name_by_its_own_words(default_encoder, tmp_path):
    names = pd.read_csv(TARGET, sep="\t", dtype=str)["name"].tolist()[:400]
    static = StaticEmbedder.distill(default_encoder, names, tmp_path)
    vectors = static.embed(names)
    nearest = np.argmax(vectors[:50] @ vectors.T, axis=1)
    assert np.mean(nearest == np.arange(50)) >= 0.9  # weak, but it knows a name from the others


def ranked(tmp_path, two_stage_above: int, cache: str):
    ranking, _ = Ranking.load(str(TARGET), RankConfig(hubness=False), encoder=EncoderConfig(),
                              cache_dir=tmp_path / cache,
                              index_config=IndexConfig(two_stage_above=two_stage_above))
    rows, vectors = ranking.embed([{"text": t} for t in ROWS], ROWS)
    found = ranking.rank(vectors, rows)
    return ranking, found[found["rank"] == 1]["target_code"].tolist()


def test_two_stages_rank_as_the_full_index_and_embed_only_the_pool(tmp_path):
    full, expected = ranked(tmp_path, 10**9, "full")
    two, found = ranked(tmp_path, 0, "two")
    assert found == expected
    embedded = two.index.vectors.embedded
    assert 0 < embedded < len(two.vocab.names) / 2  # four rows' pools, not the target
    again, _ = ranked(tmp_path, 0, "two")  # a second run embeds nothing it has
    assert again.index.vectors.embedded == embedded and again.index.vectors.embedded_now == 0
    assert again.index.cache_hit  # the static stage read back, not distilled again
    assert np.array_equal(again.index.static.embed(ROWS), two.index.static.embed(ROWS))
    assert np.allclose(again.index.vectors[np.arange(3)], full.index.vectors[:3], atol=1e-3)


def test_the_run_says_which_path_ran(tmp_path):
    source = tmp_path / "list.csv"
    source.write_text("code,name\n1," + "\n2,".join(ROWS) + "\n")
    result = CliRunner().invoke(app, ["map", str(source), "--target", str(TARGET), "-o",
                                      str(tmp_path / "out.csv"), "--cache-dir", str(tmp_path / "c"),
                                      "--two-stage-above", "0"])
    assert result.exit_code == 0, result.output
    assert "large target: two stages: " in result.output and "more than --two-stage-above 0" in result.output
    assert "two-stage: static + lexical pool" in result.output


def test_a_list_in_another_language_gets_every_name_embedded_unless_analytes_are_searched(tmp_path):
    """The first stage pools by spelling and static token vectors, which do not cross languages
    (issue #53): a German list against English names of a target without analytes is ranked on
    the full index, and said so. A LOINC table's analytes are searched by the model, which
    crosses languages, so there the German list keeps the two stages (RULE-crossing-analytes.md)."""
    other = tmp_path / "tests.tsv"  # the same names under codes that are not LOINC's
    table = pd.read_csv(TARGET, sep="\t", dtype=str)
    table.assign(code="T" + table["code"]).to_csv(other, sep="\t", index=False)
    load = lambda target, lang, cache: Ranking.load(
        str(target), RankConfig(hubness=False), encoder=EncoderConfig(), cache_dir=tmp_path / cache,
        source_lang=lang, index_config=IndexConfig(two_stage_above=0))[0]
    ranking = load(other, "de", "c")
    assert not getattr(ranking.index, "approximate", False)  # every name embedded
    assert "another language" in ranking.index_choice
    english = load(other, "en", "c2")
    assert english.index.approximate and english.index_choice.startswith("two stages")
    lab = load(TARGET, "de", "c3")
    assert lab.index.approximate and lab.index_choice.startswith("two stages")
    assert "whose analytes the model searches" in lab.index_choice


def test_vocab_embed_builds_the_two_stages_map_then_loads(tmp_path):
    cache = str(tmp_path / "c")
    embed = CliRunner().invoke(app, ["vocab", "embed", str(TARGET), "--two-stage-above", "0",
                                     "--cache-dir", cache])
    assert embed.exit_code == 0, embed.output
    assert "two-stage index built" in embed.output and "embeds every name" in embed.output
    again = CliRunner().invoke(app, ["vocab", "embed", str(TARGET), "--two-stage-above", "0",
                                     "--cache-dir", cache])
    assert "two-stage index already cached" in again.output
    ranking, _ = Ranking.load(str(TARGET), RankConfig(hubness=False), cache_dir=tmp_path / "c",
                              index_config=IndexConfig(two_stage_above=0))
    assert ranking.index.cache_hit and ranking.index.vectors.embedded == 0


def test_the_scale_bench_indexes_a_generated_target_and_pools_rows(default_encoder):
    from codemap.rank.scale_bench import name_variant, run_scale, with_variants
    from codemap.rank.two_stage import POOL_NAMES

    base = pd.DataFrame({"code": ["1", "2"], "name": ["Glucose [Mass/volume] in Serum", "Sodium"]})
    grown = with_variants(base, 7)
    assert len(grown) == 7 and grown["code"].is_unique and grown["name"].is_unique
    assert name_variant("Glucose [Mass/volume] in Serum", 1) == "Glucose in Serum by immunoassay"
    result = run_scale(8000, ROWS)
    assert result.names == 8000 and result.rows == len(ROWS)
    assert 0 < result.embedded <= 2 * POOL_NAMES * len(ROWS)
    assert result.lexical_s > 0 and result.static_s > 0 and result.peak_rss_mb > 100


def test_family_seeds_skip_neighbours_without_a_family():
    """A table mixing LOINC codes with other codes: names of codes without an analyte (not
    LOINC's) nearest a row use up no seed, so the row's analyte still joins its pool whole
    (1M-name table: pool recall 0.898 -> 0.918 on German labels, benchmarks/results/pool-scale)."""
    from codemap.rank.hybrid import FAMILY_SEEDS, _nearest_concepts
    concept_of = np.arange(10)
    has_family = np.array([False] * 5 + [True] * 5)
    as_found = [(np.array([0, 1, 2, 6, 3, 7, 8, 9]), None)]
    assert _nearest_concepts(as_found, concept_of, has_family).tolist() == [6, 7, 8][:FAMILY_SEEDS]
    scored = [(np.array([0, 9, 5, -1]), np.array([0.9, 0.5, 0.7, 0.0]))]
    assert _nearest_concepts(scored, concept_of, has_family).tolist() == [5, 9]


def test_a_row_finds_its_analytes_by_the_model_and_by_spelling(default_encoder, tmp_path):
    """The two stages' pools take every code of a row's best analytes (codemap.rank.analytes):
    found by the model for a synonym, by n-grams for a spelling; embedded once, then read back."""
    from codemap.rank import analytes
    keys = sorted(["Erythrocytes", "Leukocytes", "Platelets", "Protein", "Transferrin", "Urate",
                   "Bilirubin", "Glucose", "Sodium", "Potassium", "Hemoglobin", "Albumin", "Calcium",
                   "Chloride", "Creatinine", "Magnesium", "Phosphate", "Urea nitrogen", "Cholesterol",
                   "Triglyceride", "Ferritin", "Iron", "Lipase", "Amylase", "Lactate", "Troponin I",
                   "Thyrotropin", "Cortisol", "Insulin", "Folate", "Cobalamin"])  # more than a row takes
    index = analytes.AnalyteIndex.load(keys, default_encoder, tmp_path)
    texts = ["Red Blood Cells", "Transferin", "Uric acid"]
    best = index.best(default_encoder.encode(texts), texts)
    found = [{keys[k] for k in b} for b in best]
    assert all(len(f) <= analytes.BY_ENCODER + analytes.BY_SPELLING < len(keys) for f in found)
    assert "Erythrocytes" in found[0] and "Transferrin" in found[1] and "Urate" in found[2]
    by_spelling = index.lexical.similarity(["Transferin"])[0]
    assert keys[int(np.argmax(by_spelling))] == "Transferrin"
    again = analytes.AnalyteIndex.load(keys, None, tmp_path)  # read back: no encoder needed
    assert np.array_equal(again.vectors, index.vectors)
    with pytest.raises(AttributeError):  # other keys are embedded, not read: None cannot encode
        analytes.AnalyteIndex.load(sorted(keys + ["Albumin"]), None, tmp_path)
