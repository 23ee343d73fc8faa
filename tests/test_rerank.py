"""Cross-encoder re-ranker: pairs and hard negatives on a real KG slice (the real default model
mines them), tiny-model mechanics (loss goes down, save/load round trip), and the map/eval
option through the CLI. Tiny random models are for mechanics only, never quality."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from typer.testing import CliRunner

from codemap.cli import app
from codemap.errors import CodemapError
from codemap.rank import CrossEncoder, rerank_candidates
from codemap.train.kg import build_graph
from codemap.train.rerank import (group_loss, load_base, mine_negatives, plan_anchors,
                                  save_reranker, step_groups)
from codemap.train.sources import load_obo

DATA = Path(__file__).parent / "data"
HPO_SLICE = DATA / "store" / "hpo" / "hp.obo"  # 300 HPO terms with their synonyms
SMALL_TARGET = DATA / "loinc_en_small.csv"  # 150 LOINC codes with short-name synonyms


@pytest.fixture(scope="module")
def hpo_graph():
    return build_graph([load_obo(HPO_SLICE, "HPO")])


def test_hard_negatives_come_from_the_bi_encoder_and_groups_replay(hpo_graph, default_encoder,
                                                                   tmp_path):
    graph = hpo_graph
    anchors = plan_anchors(graph, steps=3, batch=8, seed=0)
    mined = mine_negatives(graph, anchors, default_encoder, pool=10, cache_dir=tmp_path)
    concept_of = np.searchsorted(graph.offsets, np.arange(len(graph.names)), side="right") - 1
    vectors = default_encoder.encode(graph.names)
    hard, easy = [], []
    rng = np.random.default_rng(0)
    for row, negatives in mined.items():
        assert len(negatives) > 0 and concept_of[row] not in negatives
        first = graph.offsets[negatives[0]]  # the nearest other concept, by one of its names
        hard.append(float(vectors[row] @ vectors[first]))
        easy.append(float(vectors[row] @ vectors[rng.integers(len(graph.names))]))
    assert np.mean(hard) > np.mean(easy) + 0.2  # mined negatives are much closer than random ones

    groups = step_groups(graph, anchors[1], mined, negatives=3, seed=0, step=1)
    assert groups.candidates == step_groups(graph, anchors[1], mined, 3, 0, 1).candidates
    for anchor_row, anchor, candidates in zip(anchors[1], groups.anchors, groups.candidates):
        own = concept_of[anchor_row]
        assert anchor == graph.names[anchor_row] and len(candidates) == 4
        assert candidates[0] in graph.names_of(own) and candidates[0] != anchor
        assert all(c not in graph.names_of(own) for c in candidates[1:])

    # --rerank-random-negatives: the hard ones first, then random concepts, never the anchor's own
    mixed = step_groups(graph, anchors[1], mined, negatives=3, seed=0, step=1, random_negatives=2)
    for anchor_row, candidates in zip(anchors[1], mixed.candidates):
        own, hard = concept_of[anchor_row], mined[int(anchor_row)]
        assert len(candidates) == 6 and candidates[0] in graph.names_of(own)
        assert all(c not in graph.names_of(own) for c in candidates[1:])
        assert all(any(c in graph.names_of(h) for h in hard) for c in candidates[1:min(4, 1 + len(hard))])


def test_a_graph_without_synonyms_cannot_train_a_reranker():
    names = pd.DataFrame({"code": ["a", "b"], "name": ["Glucose", "Sodium"], "name_type": "",
                          "lang": "en"})
    from codemap.vocab import Vocabulary

    graph = build_graph([Vocabulary("T", "1", names[["code", "name"]], names)])
    with pytest.raises(CodemapError, match="no concept with two names"):
        plan_anchors(graph, 2, 2, 0)


def test_tiny_cross_encoder_learns_and_round_trips(hpo_graph, tiny_model, tmp_path):
    graph = hpo_graph
    anchors = plan_anchors(graph, steps=1, batch=4, seed=0)
    groups = step_groups(graph, anchors[0], {}, negatives=3, seed=0, step=1)  # random negatives
    torch.manual_seed(0)
    model, tokenizer, _ = load_base(str(tiny_model))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        loss, _ = group_loss(model, tokenizer, groups, 40, "cpu")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]
    save_reranker(tmp_path / "model", model, tokenizer, {"max_length": 40})
    loaded = CrossEncoder.load(tmp_path / "model", "cpu")
    queries = [a for a in groups.anchors for _ in range(4)]
    candidates = [c for g in groups.candidates for c in g]
    model.eval()
    with torch.no_grad():
        want = model(**tokenizer(queries, candidates, padding=True, truncation=True, max_length=40,
                                 return_tensors="pt")).logits[:, 0].numpy()
    assert np.allclose(loaded.score(queries, candidates), want, atol=1e-5)


def test_rerank_reorders_only_the_top(tiny_model, tmp_path):
    model, tokenizer, _ = load_base(str(tiny_model))
    save_reranker(tmp_path / "m", model, tokenizer, {"max_length": 40})
    reranker = CrossEncoder.load(tmp_path / "m", "cpu")
    found = pd.DataFrame({"query": [0] * 4, "rank": [1, 2, 3, 4],
                          "target_code": list("abcd"), "target_name": ["w", "x", "y", "z"],
                          "explanation": ["e"] * 4})
    out = rerank_candidates(found, ["q"], reranker, top=3)
    logits = reranker.score(["q"] * 3, ["w", "x", "y"])
    assert out["target_code"].tolist()[:3] == [list("abc")[i] for i in np.argsort(-logits, kind="stable")]
    assert out["rank"].tolist() == [1, 2, 3, 4] and out.iloc[3]["target_code"] == "d"
    assert all("reranker" in e for e in out["explanation"][:3]) and out.iloc[3]["explanation"] == "e"


def test_cli_train_reranker_then_map_and_eval_with_it(tiny_model, tmp_path):
    runner = CliRunner()
    out = tmp_path / "rr"
    result = runner.invoke(app, ["train-reranker", "--kg", str(SMALL_TARGET), "--base", str(tiny_model),
                                 "--steps", "3", "--rerank-batch", "4", "--rerank-negatives", "2",
                                 "--rerank-random-negatives", "1", "--rerank-pool", "5", "--warmup-steps", "1", "--log-every", "1",
                                 "--out", str(out), "--progress", "false"])
    assert result.exit_code == 0, result.output
    assert (out / "model" / "reranker.json").exists() and (out / "model" / "model.safetensors").exists()
    assert len((out / "log.csv").read_text().splitlines()) == 4
    assert json.loads((out / "model" / "reranker.json").read_text())["random_negatives"] == 1

    source = tmp_path / "labs.csv"
    source.write_text("code,label\n1,Globulin Ser Calc\n2,Anion gap serum\n", encoding="utf-8")
    mapped = tmp_path / "labs.csv.out.csv"
    result = runner.invoke(app, ["map", str(source), "--target", str(SMALL_TARGET), "-o", str(mapped),
                                 "--rerank", str(out / "model"), "--rerank-top", "5", "-q"])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(mapped)
    assert frame.groupby("source_row")["rank"].apply(list).tolist() == [list(range(1, 11))] * 2
    top = frame[frame["rank"] <= 5]
    assert top["explanation"].str.contains("reranker").all()
    assert not frame[frame["rank"] > 5]["explanation"].str.contains("reranker").any()

    gold = tmp_path / "gold.tsv"
    gold.write_text("label\tloinc_code\nGlobulin Ser Calc\t10834-0\nAnion gap 3\t10466-1\n",
                    encoding="utf-8")
    result = runner.invoke(app, ["eval", str(gold), "--target", str(SMALL_TARGET), "--gold-col",
                                 "loinc_code", "--rerank", str(out / "model"), "-q"])
    assert result.exit_code == 0, result.output
    assert "hybrid + rerank" in result.output and "encoder + rerank" in result.output
    assert "ms per row" in result.output


def test_cli_rerank_user_errors_exit_2(tmp_path):
    runner = CliRunner()
    gold = tmp_path / "gold.tsv"
    gold.write_text("label\tloinc_code\nGlobulin Ser Calc\t10834-0\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", str(gold), "--target", str(SMALL_TARGET), "--gold-col",
                                 "loinc_code", "--rerank", str(tmp_path), "-q"])
    assert result.exit_code == 2 and "not a re-ranker folder" in result.output
    result = runner.invoke(app, ["train-reranker", "--kg", str(SMALL_TARGET), "--rerank-negatives",
                                 "0", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--rerank-negatives" in result.output
    result = runner.invoke(app, ["train-reranker", "--kg", str(SMALL_TARGET),
                                 "--rerank-random-negatives", "-1", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "--rerank-random-negatives" in result.output
