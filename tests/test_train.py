"""CODER trainer: losses against hand-computed cases, sampler guarantees, tiny-model mechanics."""
import re
import math

import numpy as np
import pandas as pd
import pytest
import torch

from codemap.errors import CodemapError
from codemap.train.config import TrainConfig, parse_overrides
from codemap.train.kg import TripletSampler, build_graph, clean_name
from codemap.train.losses import (MultiSimilarityLoss, RelationMSLoss, mine_hard_pairs,
                                  ms_loss_from_similarity)
from codemap.vocab import Vocabulary


def test_mining_keeps_only_hard_pairs():
    sim = torch.tensor([[1.0, 0.9, 0.3, 0.85]])
    pos = torch.tensor([[False, True, False, False]])
    neg = torch.tensor([[False, False, True, True]])
    hard_pos, hard_neg = mine_hard_pairs(sim, pos, neg, eps=0.1)
    # min pos 0.9 → negatives above 0.8: only 0.85; max neg 0.85 → positives below 0.95: 0.9
    assert hard_neg.tolist() == [[False, False, False, True]]
    assert hard_pos.tolist() == [[False, True, False, False]]


def test_ms_value_matches_hand_computation():
    sim = torch.tensor([[1.0, 0.9, 0.85]])
    pos = torch.tensor([[False, True, False]])
    neg = torch.tensor([[False, False, True]])
    got = ms_loss_from_similarity(sim, pos, neg, alpha=2, beta=50, lam=0.5, eps=0.1)
    want = math.log(1 + math.exp(-2 * 0.4)) / 2 + math.log(1 + math.exp(50 * 0.35)) / 50
    assert got.item() == pytest.approx(want, rel=1e-5)


def test_degenerate_batches_give_zero_loss_with_a_graph():
    emb = torch.randn(4, 8, requires_grad=True)
    loss = MultiSimilarityLoss()
    assert loss(emb, torch.tensor([0, 1, 2, 3])).item() == 0.0  # no positives
    same = loss(emb, torch.tensor([5, 5, 5, 5]))  # no negatives
    assert same.item() == 0.0
    same.backward()
    assert torch.isfinite(emb.grad).all()


def test_gradient_reaches_relation_matrices():
    torch.manual_seed(0)
    rel = RelationMSLoss(n_relations=2, dim=8)
    heads, tails = torch.randn(4, 8), torch.randn(4, 8)
    loss = rel(heads, tails, torch.tensor([0, 0, 1, 1]), torch.tensor([7, 7, 8, 8]))
    loss.backward()
    assert loss.item() > 0
    assert rel.matrices.grad[0].abs().sum() > 0 and rel.matrices.grad[1].abs().sum() > 0


def _vocab():
    names = pd.DataFrame({"code": ["a", "a", "b", "b", "c", "d"],
                          "name": ["Glucose", "GLU", "Sodium", "Na", "Potassium NOS", "Urea-N"]})
    names = names.assign(name_type="", lang="en")
    relations = pd.DataFrame({"head": ["a"], "relation": ["is_a"], "tail": ["b"]})
    return Vocabulary("T", "1", names.drop_duplicates("code")[["code", "name"]], names,
                      relations=relations)


def test_graph_synonym_triplets_and_holdout():
    graph = build_graph([_vocab()], holdout={"na"})
    assert graph.removed_names == 1
    assert "potassium" in graph.names and "urea n" in graph.names
    labels = [graph.relation_labels[r] for r in graph.triplets[:, 1]]
    assert labels.count("synonym") == 2 and labels.count("is_a") == 1  # c and d are alone
    assert clean_name("Heart-Attack, NOS") == "heart attack"


def test_graph_keeps_only_the_asked_languages():
    names = pd.DataFrame({"code": ["1", "1", "1", "2"], "name": ["potassium", "Kalium", "钾", "sodium"],
                          "name_type": "", "lang": ["en", "de-DE", "zh", ""]})
    vocab = Vocabulary(id="T", version="1", concepts=names.drop_duplicates("code")[["code", "name"]],
                       names=names)
    graph = build_graph([vocab], languages=frozenset({"en", "de"}))
    assert graph.names == ["potassium", "kalium", "sodium"]  # no stated language: kept


def test_sampler_repeats_each_triplet_m_times_and_is_replayable():
    graph = build_graph([_vocab()])
    sampler = TripletSampler(graph, k=9, m=3, seed=1)
    batch = sampler.batch(5)
    _, counts = np.unique(batch.triplets, return_counts=True)
    assert sorted(counts) == [3, 3, 3]
    for name, concept in zip(batch.names, batch.labels):
        assert name in graph.names_of(concept)
    again = TripletSampler(graph, k=9, m=3, seed=1).batch(5)
    assert again.names == batch.names
    with pytest.raises(CodemapError):
        TripletSampler(graph, k=8, m=4)  # m > √k


def test_relation_only_parts_leave_the_term_loss_but_feed_the_relation_loss():
    """part_term_loss=False: a concept named only by LOINC parts gets a negative label in the
    batch, forms no term-loss pair (the loss equals the loss without its rows), and still enters
    the relation loss as a tail with its own label."""
    names = pd.DataFrame({"code": ["718-7", "718-7", "component:hemoglobin", "2345-7"],
                          "name": ["Hemoglobin [Mass/volume] in Blood", "Hgb Bld-mCnc", "Hemoglobin",
                                   "Glucose SerPl-mCnc"],
                          "name_type": ["preferred", "short", "part", "short"], "lang": "en"})
    relations = pd.DataFrame({"head": ["718-7"], "relation": ["has_component"],
                              "tail": ["component:hemoglobin"]})
    vocab = Vocabulary("LOINC", "1", names.drop_duplicates("code")[["code", "name"]], names,
                       relations=relations)
    graph = build_graph([vocab], relation_only_types=frozenset({"part"}))
    part = graph.concepts.index("LOINC:component:hemoglobin")
    assert graph.relation_only.tolist() == [c == part for c in range(len(graph.concepts))]
    assert build_graph([vocab]).relation_only is None  # the paper's way stays the default
    batch = TripletSampler(graph, k=4, m=2, seed=0).batch(0)
    assert {int(label) for label in batch.labels if label < 0} <= {-(part + 1)}
    torch.manual_seed(0)
    emb = torch.randn(5, 8)
    loss = MultiSimilarityLoss(lam=0.0)
    labels = torch.tensor([0, 0, -3, 1, 1])
    keep = [0, 1, 3, 4]
    assert (loss(emb, labels) * 5).item() == pytest.approx(
        (loss(emb[keep], labels[keep]) * 4).item(), rel=1e-6)
    rel = RelationMSLoss(n_relations=1, dim=8)
    assert rel(emb[:2], emb[2:4], torch.tensor([0, 0]), torch.tensor([-3, 1])).item() > 0


def test_triplet_ends_are_not_term_negatives_when_switched_off():
    """triplet_end_negatives=False: the head and tail concepts of a batch triplet (an ICD code and
    its parent) are not pushed apart by the term loss; other negatives still count."""
    from codemap.train.losses import CoderLoss, triplet_ends

    labels = torch.tensor([0, 0, 1, 1])  # k=2 rows of one triplet (0, r, 1), repeated twice
    assert triplet_ends(labels, 2).tolist() == [[False, False, True, True], [False, False, True, True],
                                                [True, True, False, False], [True, True, False, False]]
    torch.manual_seed(0)
    emb = torch.randn(1, 8) + 0.05 * torch.randn(4, 8)  # head and tail names nearly the same
    relations = torch.tensor([0, 0])
    paper = CoderLoss(MultiSimilarityLoss(), None)(emb, labels, relations)["term"]
    off = CoderLoss(MultiSimilarityLoss(), None, triplet_end_negatives=False)(emb, labels, relations)["term"]
    assert paper.item() > 0 and off.item() == 0.0
    five = torch.tensor([0, 0, 1, 1, 7])  # + an unrelated name: still a negative
    emb5 = torch.cat([emb, emb[:1] + 0.01])
    assert CoderLoss(MultiSimilarityLoss(), None, triplet_end_negatives=False)(
        emb5, five, relations)["term"].item() > 0


def test_config_overrides():
    config = parse_overrides(["--config", "smoke", "--kg", "loinc", "--steps", "3"])
    assert config.kg == ("loinc",) and config.steps == 3
    with pytest.raises(CodemapError):
        parse_overrides(["--nope", "1"])
    with pytest.raises(CodemapError):
        parse_overrides(["--steps", "many"])


def test_train_help_lists_every_setting_with_its_default_and_help(monkeypatch):
    from dataclasses import fields

    from typer.testing import CliRunner

    from codemap.cli import app

    for command in ("train", "train-reranker"):
        shown = CliRunner().invoke(app, [command, "--help"]).output
        # One entry per option: its first line and the wrapped lines under it, joined.
        entries = [" ".join(("-" + e).split()) for e in re.split(r"\n  (?=-)", shown)]
        for setting in fields(TrainConfig):
            default = getattr(TrainConfig(), setting.name)
            default = ", ".join(default) if isinstance(default, tuple) else default
            flag = f"--{setting.name.replace('_', '-')} "
            line = next(e[1:] for e in entries if e[1:].startswith(flag))
            assert setting.metadata["help"][:30] in line, setting.name
            assert f"[default: {default if default != '' else '(empty)'}]" in line, setting.name


def test_cli_options_override_a_preset_and_reach_the_trainer(monkeypatch):
    """Options typed beside --config override the preset; the ones left out keep its values."""
    from dataclasses import replace

    from typer.testing import CliRunner

    from codemap.cli import app
    from codemap.train.config import load_preset

    seen = []
    monkeypatch.setattr("codemap.train.loop.train", lambda config: seen.append(config) or {})
    result = CliRunner().invoke(app, ["train", "--config", "smoke", "--steps", "7", "--kg", "a",
                                      "--kg", "b", "--progress", "true", "--lr", "1e-4"])
    assert result.exit_code == 0, result.output
    assert seen == [replace(load_preset("smoke"), steps=7, kg=("a", "b"), progress=True, lr=1e-4)]
    assert seen[0] == parse_overrides(["--config", "smoke", "--steps", "7", "--kg", "a", "--kg",
                                       "b", "--progress", "true", "--lr", "1e-4"])
    bad = CliRunner().invoke(app, ["train", "--steps", "many"])
    assert bad.exit_code == 2 and "--steps 'many': expected a int" in bad.output


def test_every_preset_loads():
    """The shipped presets (the README's CPU run uses cpu-labs) only name real settings."""
    from codemap.train.config import PRESETS, load_preset
    for path in sorted(PRESETS.glob("*.json")):
        config = load_preset(path.stem)
        assert 2 <= config.repeats and config.repeats ** 2 <= config.batch_triplets, path.name
    assert load_preset("cpu-labs").kg == ("loinc",)
    assert load_preset("cpu-kg").kg == ("loinc-en", "icd10cm")


@pytest.fixture(scope="module")
def tiny_setup(tmp_path_factory):
    """A random tiny BERT (mechanics only, never quality) and a small synonym vocabulary."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from codemap.embed import default_model_path

    root = tmp_path_factory.mktemp("tiny")
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, intermediate_size=64))
    model.save_pretrained(root / "model")
    AutoTokenizer.from_pretrained(default_model_path()).save_pretrained(root / "model")
    rows = ["code\tname\tsynonyms", "1\tglucose\tglu|blood sugar", "2\tsodium\tna|natrium",
            "3\tpotassium\tk|kalium", "4\tcreatinine\tcreat|crea", "5\themoglobin\thgb|hb",
            "6\turea nitrogen\tbun|urea"]
    (root / "vocab.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _tiny_config(root, out, **changes):
    return TrainConfig(kg=(str(root / "vocab.tsv"),), base=str(root / "model"), out=str(out),
                       batch_triplets=12, repeats=3, lr=1e-3, warmup_steps=1, log_every=1,
                       checkpoint_every=2, progress=False, **changes)


def _losses(out):
    return pd.read_csv(out / "log.csv").set_index("step")["loss"]


def test_tiny_model_loss_goes_down_and_writes_a_loadable_model(tiny_setup, tmp_path):
    from codemap.embed import Encoder
    from codemap.config import EncoderConfig
    from codemap.train.loop import train

    summary = train(_tiny_config(tiny_setup, tmp_path / "run", steps=30))
    losses = _losses(tmp_path / "run")
    assert losses.iloc[-5:].mean() < losses.iloc[:5].mean()
    assert summary["graph"]["triplets"] == 6  # synonym-only triplets
    encoder = Encoder.load(EncoderConfig(model=str(tmp_path / "run" / "model"), device="cpu"))
    assert encoder.encode(["glucose"]).shape == (1, 32)
    assert (tmp_path / "run" / "model" / "relations.safetensors").exists()
    # the evaluator scores the trained folder and returns the per-query ranks behind its scores
    from codemap.config import EvalConfig
    from codemap.evaluate import evaluate_gold

    gold = tmp_path / "gold.tsv"
    gold.write_text("label\tcode\nblood sugar\t1\nnatrium\t2\nhb\t5\n", encoding="utf-8")
    result = evaluate_gold(EvalConfig(gold=gold, target=str(tiny_setup / "vocab.tsv"), gold_col="code",
                                      text_cols=("label",), encoder=EncoderConfig(
                                          model=str(tmp_path / "run" / "model"), device="cpu"),
                                      cache_dir=tmp_path / "cache", progress=False))
    ranks = result["ranks"]["encoder"]
    assert len(ranks) == 3 and all(r is None or r >= 1 for r in ranks)
    assert result["scores"]["encoder"].as_row()["acc@1"] == pytest.approx(
        sum(r == 1 for r in ranks) / 3, abs=1e-3)


def test_resume_gives_the_same_next_losses(tiny_setup, tmp_path):
    import shutil

    from codemap.train.loop import train

    train(_tiny_config(tiny_setup, tmp_path / "full", steps=4, keep_checkpoints=5))
    (tmp_path / "resumed" / "checkpoints").mkdir(parents=True)
    shutil.copytree(tmp_path / "full" / "checkpoints" / "step-0000002",
                    tmp_path / "resumed" / "checkpoints" / "step-0000002")
    train(_tiny_config(tiny_setup, tmp_path / "resumed", steps=4, keep_checkpoints=5))
    full, resumed = _losses(tmp_path / "full"), _losses(tmp_path / "resumed")
    assert list(resumed.index) == [3, 4]
    assert resumed.loc[3] == pytest.approx(full.loc[3], abs=1e-6)
    assert resumed.loc[4] == pytest.approx(full.loc[4], abs=1e-6)


def test_resume_refuses_a_base_name_that_now_means_other_weights(tiny_setup, tmp_path):
    """A checkpoint records the base it was trained on; when the name moved ("default" became
    the trained coder-en), resuming on top of the other weights is refused, not done."""
    import json

    from codemap.errors import CodemapError
    from codemap.train.loop import train

    train(_tiny_config(tiny_setup, tmp_path / "run", steps=2))
    state_file = tmp_path / "run" / "checkpoints" / "step-0000002" / "state.json"
    state = json.loads(state_file.read_text())
    assert state["base"] == str(tiny_setup / "model")  # ModelInfo.key() of a folder: its path
    state["base"] = "default@0123456789ab"
    state_file.write_text(json.dumps(state))
    with pytest.raises(CodemapError, match="was trained on base 'default@0123456789ab'"):
        train(_tiny_config(tiny_setup, tmp_path / "run", steps=4))


def test_lora_checkpoints_are_compact_resume_exactly_and_save_a_merged_model(tiny_setup, tmp_path):
    """--lora-rank: the checkpoint holds the adapter, relations and optimiser state only (no full
    weights), a resumed run replays the same losses, and the final folder is the base with the
    adapter merged in (loadable like any model) plus the adapter alone in adapter/."""
    import shutil

    from safetensors.torch import load_file

    from codemap.config import EncoderConfig
    from codemap.embed import Encoder
    from codemap.train.loop import train

    lora = {"lora_rank": 4, "keep_checkpoints": 5}
    train(_tiny_config(tiny_setup, tmp_path / "full", steps=4, **lora))
    checkpoint = tmp_path / "full" / "checkpoints" / "step-0000002"
    assert not (checkpoint / "model").exists()
    adapter = load_file(str(checkpoint / "adapter.safetensors"))
    assert adapter and all("lora_" in name for name in adapter)
    assert sorted(p.name for p in checkpoint.glob("optimizer-*.safetensors")) == ["optimizer-000.safetensors"]
    (tmp_path / "resumed" / "checkpoints").mkdir(parents=True)
    shutil.copytree(checkpoint, tmp_path / "resumed" / "checkpoints" / "step-0000002")
    train(_tiny_config(tiny_setup, tmp_path / "resumed", steps=4, **lora))
    full, resumed = _losses(tmp_path / "full"), _losses(tmp_path / "resumed")
    assert list(resumed.index) == [3, 4]
    assert resumed.loc[3] == pytest.approx(full.loc[3], abs=1e-6)
    assert resumed.loc[4] == pytest.approx(full.loc[4], abs=1e-6)
    model = tmp_path / "full" / "model"
    assert (model / "adapter" / "adapter_config.json").exists()
    merged = load_file(str(model / "model.safetensors"))
    base = load_file(str(tiny_setup / "model" / "model.safetensors"))
    name = next(k for k in merged if k.endswith("attention.self.query.weight"))
    assert not torch.equal(merged[name], base[name])  # the adapter is in the weights
    encoder = Encoder.load(EncoderConfig(model=str(model), device="cpu"))
    assert encoder.encode(["glucose"]).shape == (1, 32)
    with pytest.raises(CodemapError, match="LoRA"):  # a full run cannot resume a LoRA checkpoint
        train(_tiny_config(tiny_setup, tmp_path / "resumed", steps=6, keep_checkpoints=5))


def test_shipped_adapter_merges_into_the_base_like_peft(tiny_setup, tmp_path):
    """train.ship writes an fp16 adapter + manifest; codemap.embed.adapters merges it into the base
    without peft and gets the weights peft's merge_and_unload saved, to fp16 precision."""
    import numpy as np
    from safetensors.numpy import load_file

    from codemap.embed.adapters import materialise
    from codemap.embed.manifest import read_manifest
    from codemap.train.loop import train
    from codemap.train.ship import ship

    train(_tiny_config(tiny_setup, tmp_path / "run", steps=4, lora_rank=4))
    folder = ship(tmp_path / "run", "tiny-coder", out_root=tmp_path / "shipped")
    assert (folder / "adapter.safetensors").stat().st_size < 200_000
    merged = materialise(folder, tiny_setup / "model", tmp_path / "cache")
    ours, peft = load_file(str(merged / "model.safetensors")), load_file(str(tmp_path / "run" / "model" / "model.safetensors"))
    assert set(ours) >= set(peft) - {"embeddings.position_ids"}
    assert max(float(np.abs(ours[k] - peft[k]).max()) for k in peft if k in ours) < 1e-3
    assert materialise(folder, tiny_setup / "model", tmp_path / "cache") == merged  # built once
    assert read_manifest(merged, "tiny").extra["adapter"] == "tiny-coder"


def test_a_shipped_adapter_becomes_default_only_when_its_manifest_says_so(tiny_setup, tmp_path,
                                                                         monkeypatch):
    """--model NAME finds a shipped adapter; "default" means it only when the decision rule wrote
    `replaces: default`; "default-base" is always the untrained MiniLM."""
    from codemap.embed import adapters, models
    from codemap.embed.models import default_model_path, resolve_model
    from codemap.train.loop import train
    from codemap.train.ship import ship

    monkeypatch.setattr(adapters, "shipped_folder", lambda: tmp_path / "shipped")
    monkeypatch.setattr(models, "shipped_folder", lambda: tmp_path / "shipped")
    train(_tiny_config(tiny_setup, tmp_path / "run", steps=2, lora_rank=4))
    ship(tmp_path / "run", "tiny-coder", out_root=tmp_path / "shipped")
    assert resolve_model("default", tmp_path / "cache").path == default_model_path()
    assert resolve_model("tiny-coder", tmp_path / "cache").extra["adapter"] == "tiny-coder"
    ship(tmp_path / "run", "tiny-coder", out_root=tmp_path / "shipped", replaces="default")
    trained = resolve_model("default", tmp_path / "cache")
    assert trained.id == "default" and trained.extra["adapter"] == "tiny-coder"
    assert resolve_model("default-base", tmp_path / "cache").path == default_model_path()


def test_training_names_carry_the_base_models_prefix():
    """e5 embeds "query: " + text; the trainer must train on the same strings."""
    from transformers import AutoTokenizer

    from codemap.embed import Pooling
    from codemap.embed.models import default_model_path
    from codemap.train.model import TermEncoder

    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    encoder = TermEncoder(torch.nn.Identity(), tokenizer, Pooling.MEAN, 32, prefix="query: ")
    ids = encoder.tokenize(["sodium"], "cpu")["input_ids"][0].tolist()
    assert tokenizer.decode(ids, skip_special_tokens=True) == "query : sodium"


def test_cli_train_writes_a_model_and_rejects_unknown_options(tiny_setup, tmp_path):
    from typer.testing import CliRunner

    from codemap.cli import app

    out = tmp_path / "cli"
    result = CliRunner().invoke(app, ["train", "--kg", str(tiny_setup / "vocab.tsv"), "--base",
                                      str(tiny_setup / "model"), "--steps", "2", "--batch-triplets",
                                      "12", "--repeats", "3", "--out", str(out), "--progress", "false"])
    assert result.exit_code == 0, result.output
    assert (out / "model" / "codemap.json").exists() and (out / "log.csv").exists()
    bad = CliRunner().invoke(app, ["train", "--no-such-option", "1"])
    assert bad.exit_code == 2


def test_icd10cm_source_and_inclusion_dev_holdout():
    """--kg icd10cm: titles + inclusion terms as synonyms, is_a to the parent, no 7th-character
    extensions; --holdout of the ICD dev set removes every dev query from the training names."""
    from pathlib import Path

    from codemap.train.loop import holdout_names
    from codemap.train.sources import resolve_kg

    vocab = resolve_kg("icd10cm", None)
    names = vocab.names[vocab.names["code"] == "A00.0"]["name"].tolist()
    assert "Cholera due to Vibrio cholerae 01, biovar cholerae" in names and "Classical cholera" in names
    rel = vocab.relations
    assert rel[(rel["head"] == "A00.0")]["tail"].tolist() == ["A00"]
    assert not vocab.names["code"].isin(["S72.001A", "T36.0X1A"]).any()
    dev = Path(__file__).parents[1] / "benchmarks" / "data" / "icd10cm_inclusion_dev.tsv"
    held = holdout_names((str(dev),), ("term",))
    graph = build_graph([vocab], holdout=held)
    assert graph.removed_names >= 400 and not held & set(graph.names)


def test_holdout_list_holds_out_every_evaluation_query():
    """benchmarks/data/holdout_queries.txt: every listed table with its own query column."""
    from pathlib import Path

    import pandas as pd

    from codemap.train.loop import holdout_names

    root = Path(__file__).parents[1]
    listing = root / "benchmarks" / "data" / "holdout_queries.txt"
    held = holdout_names((str(listing),), ())
    for line in listing.read_text(encoding="utf-8").splitlines():
        table, col = line.split("\t")
        sep = "\t" if table.endswith(".tsv") else ","
        queries = pd.read_csv(root / table, sep=sep, dtype=str, keep_default_na=False)[col]
        assert {clean_name(q) for q in queries if q.strip()} <= held, table


def test_english_loinc_and_do_sources_read_the_public_layout(tmp_path):
    """loinc-en keeps English names only and links codes to English component parts; do finds
    the dated doid file."""
    from codemap.train.sources import resolve_kg

    (tmp_path / "loinc-shortnames").mkdir()
    (tmp_path / "loinc-shortnames" / "loinc_shortnames.tsv").write_text(
        "2345-7\tGlucose SerPl-mCnc\n718-7\tHgb Bld-mCnc\n", encoding="utf-8")
    (tmp_path / "loinc-top2000").mkdir()
    (tmp_path / "loinc-top2000" / "top.csv").write_text(
        "LOINC #,Long Common Name,Short Name,CLASS,Rank\n"
        "718-7,Hemoglobin [Mass/volume] in Blood,Hgb Bld-mCnc,HEM/BC,2\n", encoding="utf-8")
    (tmp_path / "loinc-core-2col").mkdir()
    (tmp_path / "loinc-core-2col" / "LoincTableCore_LOINC_NUM_COMPONENT.csv").write_text(
        "LOINC_NUM,COMPONENT\n2345-7,Glucose\n718-7,Hemoglobin\n9999-9,Unnamed\n", encoding="utf-8")
    vocab = resolve_kg("loinc-en", tmp_path)
    assert set(vocab.names["lang"]) == {"en"}
    assert set(vocab.names[vocab.names["code"] == "718-7"]["name"]) == {
        "Hgb Bld-mCnc", "Hemoglobin [Mass/volume] in Blood"}
    assert sorted(vocab.relations["tail"]) == ["component:glucose", "component:hemoglobin"]
    (tmp_path / "disease-ontology").mkdir()
    (tmp_path / "disease-ontology" / "doid_2016-09-01.obo").write_text(
        "[Term]\nid: DOID:1\nname: disease\n\n[Term]\nid: DOID:2\nname: flu\n"
        'synonym: "influenza" EXACT []\nis_a: DOID:1 ! disease\n', encoding="utf-8")
    do = resolve_kg("do", tmp_path)
    assert do.relations.values.tolist() == [["DOID:2", "is_a", "DOID:1"]]


def test_the_shipped_coder_en_adapter_loads_and_keeps_synonyms_together(tmp_path):
    """The real shipped adapter (codemap/data/models/coder-en): small, on the packaged MiniLM,
    its decisions recorded; `default` from its second rule until coder-multilingual passed the
    rule that made it the default (RULE-default-model.md); merged, it embeds a synonym nearer
    than a stranger."""
    from codemap.embed import Encoder
    from codemap.config import EncoderConfig
    from codemap.embed.adapters import adapter_replacing, shipped_adapters, shipped_folder
    from codemap.embed.models import resolve_model

    manifest = shipped_adapters()["coder-en"]
    assert manifest["base"] == "default" and manifest["evaluation"]["rule_holds"]
    assert (shipped_folder() / "coder-en" / "adapter.safetensors").stat().st_size < 25 * 2**20
    assert manifest["default_rule"]["holds"] and not manifest["replaces"]
    assert adapter_replacing("default") == "coder-multilingual"
    assert resolve_model("coder-en", tmp_path).extra["adapter"] == "coder-en"
    encoder = Encoder.load(EncoderConfig(model="coder-en", backend="torch"), cache_dir=tmp_path)
    a, b, c = encoder.encode(["heart attack", "myocardial infarction", "fracture of femur"])
    assert float(a @ b) > float(a @ c) + 0.1
