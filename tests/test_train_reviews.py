"""`codemap train --from-reviews`: a mapping memory of real drug reviews (curated MIMIC strings →
OMOP drug concepts, the wrong concept of the same ingredient rejected) → graph, held-out split,
batches with the rejected candidates, a tiny random BERT trained through the CLI (mechanics only,
never quality), the report, and the user errors."""
import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.review import MappingMemory
from codemap.train.config import TrainConfig
from codemap.train.kg import TripletSampler
from codemap.train.reviews import load_reviews
from codemap.vocab import load_vocab_file

from .conftest import DATA
from .test_train import tiny_setup  # noqa: F401  (the random tiny BERT fixture)

PAIRS = DATA / "ohdsi-mimic-drugs" / "dev_local_drug_to_concept.tsv"
N_SOURCES = 30


@pytest.fixture(scope="module")
def review_memory(tmp_path_factory):
    """30 real curated pairs as approvals; for each, a different concept whose name starts with
    the same word (same ingredient, other strength or form) as a rejection; one automatic
    approval and one approval of a code not in the target, both to be left out."""
    root = tmp_path_factory.mktemp("reviews")
    pairs = pd.read_csv(PAIRS, sep="\t", dtype=str, keep_default_na=False)
    first_word = pairs["target_name"].str.split().str[0].str.lower()
    rows = []
    for i, pair in pairs.iterrows():
        others = pairs[(first_word == first_word[i]) & (pairs["target_concept_id"] != pair["target_concept_id"])]
        if len(others) and len(rows) < 2 * N_SOURCES:
            code = f"drug-{i:03d}"
            rows.append((code, pair["local_drug_string"], pair["target_concept_id"], "approved", 0))
            rows.append((code, pair["local_drug_string"], others.iloc[0]["target_concept_id"],
                         "rejected", 0))
    targets = pairs.drop_duplicates("target_concept_id")[["target_concept_id", "target_name"]]
    targets.columns = ["concept_id", "concept_name"]
    targets = targets.assign(domain_id="Drug")  # as in the shipped drug target
    used = {r[2] for r in rows}
    targets = targets[targets["concept_id"].isin(used)]
    target_file = root / "drug_targets_small.tsv"
    targets.to_csv(target_file, sep="\t", index=False)
    rows.append(("drug-auto", "Ondansetron 4mg", rows[0][2], "approved", 1))
    rows.append(("drug-gone", "Something else", "999999999", "approved", 0))
    reviews = pd.DataFrame(rows, columns=["source_code", "source_text", "target_code", "decision",
                                          "automatic"])
    reviews = reviews.assign(target_name="", equivalence="", reviewer="test", comment="")
    vocab = load_vocab_file(target_file)
    memory = root / "mappings.db"
    with MappingMemory(memory) as db:
        db.store(reviews, vocab, source="reviewed.xlsx", spec=str(target_file))
    return memory, reviews


def _config(memory, out, **changes):
    return TrainConfig(from_reviews=str(memory), out=str(out), batch_triplets=8, repeats=2,
                       hard_negatives=2, **changes)


def test_split_graph_and_hard_negatives_in_the_batch(review_memory, tmp_path):
    memory, reviews = review_memory
    data, config = load_reviews(_config(memory, tmp_path), tmp_path)
    counts = data.counts
    assert counts["sources_approved"] == N_SOURCES  # the automatic and the unknown code left out
    assert counts["automatic_left_out"] == 1 and counts["not_in_target_left_out"] == 1
    assert counts["heldout_sources"] == 6 and counts["train_sources"] == 24
    split = pd.read_csv(tmp_path / "split.tsv", sep="\t", dtype=str, keep_default_na=False)
    held = set(split.loc[split["part"] == "heldout", "source_text"].str.lower())
    trained = set(split.loc[split["part"] == "train", "source_text"].str.lower())
    assert held and trained and not held & trained
    assert not held & {n.lower() for n in data.graph.names}  # no held-out text is trained on
    again, _ = load_reviews(_config(memory, tmp_path / "again"), tmp_path / "again")
    assert list(again.heldout["source_code"]) == list(data.heldout["source_code"])
    other, _ = load_reviews(_config(memory, tmp_path / "other", split_seed=1), tmp_path / "other")
    assert list(other.heldout["source_code"]) != list(data.heldout["source_code"])
    assert config.eval_file.endswith("heldout.tsv") and config.eval_gold_col == "target_code"
    assert config.eval_target == str((memory.parent / "drug_targets_small.tsv").resolve())

    # Every training text carries the label of its approved target; its rejection is in the batch.
    graph = data.graph
    spaced = reviews.assign(source_text=reviews["source_text"].str.split().str.join(" "))
    approved, rejected = ({text: code for text, code, d in zip(spaced["source_text"], spaced["target_code"],
                                                            spaced["decision"]) if d == decision}
                          for decision in ("approved", "rejected"))
    code_of = {i: c.split(":", 1)[1] for i, c in enumerate(graph.concepts)}
    batch = TripletSampler(graph, 8, 2, seed=0, hard_negatives=2).batch(3)
    assert batch.negatives == 4 and len(batch.names) == 2 * 8 + 4
    heads = batch.names[:8]
    for name, label in zip(heads, batch.labels[:8]):
        assert code_of[label] == approved[name]
    negative_codes = {code_of[label] for label in batch.labels[16:]}
    assert negative_codes == {rejected[name] for name in heads}
    assert TripletSampler(graph, 8, 2, seed=0).batch(3).negatives == 0  # hard_negatives 0: none


def test_cli_trains_from_reviews_and_reports(review_memory, tiny_setup, tmp_path):  # noqa: F811
    from codemap.config import EncoderConfig
    from codemap.embed import Encoder

    memory, _ = review_memory
    out = tmp_path / "site"
    result = CliRunner().invoke(app, ["train", "--from-reviews", str(memory), "--base",
                                      str(tiny_setup / "model"), "--out", str(out), "--steps", "25",
                                      "--batch-triplets", "8", "--repeats", "2", "--lr", "1e-3",
                                      "--warmup-steps", "1", "--log-every", "1", "--device", "cpu",
                                      "--progress", "false"])
    assert result.exit_code == 0, result.output
    assert "| embedding alone (encoder) |" in result.output and "acc@1 before" in result.output
    losses = pd.read_csv(out / "log.csv").set_index("step")["loss"]
    assert losses.iloc[-5:].mean() < losses.iloc[:5].mean()
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["heldout"]["n"] == 6 and report["counts"]["train_sources"] == 24
    for ranking in ("encoder", "default"):
        scores = report["scores"][ranking]
        assert set(scores["before"]) >= {"acc@1", "acc@10", "mrr"}
        assert scores["gain"]["acc@1"] == pytest.approx(scores["after"]["acc@1"] - scores["before"]["acc@1"])
    assert report["scores"]["default"]["method"] == "hybrid + drug evidence"
    eval_rows = pd.read_csv(out / "eval.csv")
    assert list(eval_rows["step"]) == [0, 25]
    encoder = Encoder.load(EncoderConfig(model=str(out / "model"), device="cpu"))
    assert encoder.encode(["Ondansetron 4mg"]).shape == (1, 32)
    manifest = json.loads((out / "model" / "codemap.json").read_text(encoding="utf-8"))
    assert manifest["extra"]["reviews"] == str(memory)


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    (b"source_code,target_code\n1,2\n", "not a codemap mapping memory"),
])
def test_bad_memory_file_exits_2(tmp_path, content, message):
    memory = tmp_path / "mappings.db"
    if content is not None:
        memory.write_bytes(content)
    result = CliRunner().invoke(app, ["train", "--from-reviews", str(memory), "--out",
                                      str(tmp_path / "out"), "--progress", "false"])
    assert result.exit_code == 2 and message in result.output


def test_memory_without_enough_reviews_exits_2(review_memory, tmp_path):
    memory, reviews = review_memory
    lone = tmp_path / "lone.db"
    vocab = load_vocab_file(memory.parent / "drug_targets_small.tsv")
    with MappingMemory(lone) as db:
        db.store(reviews.head(2), vocab, source="x.xlsx", spec=str(memory.parent / "drug_targets_small.tsv"))
    result = CliRunner().invoke(app, ["train", "--from-reviews", str(lone), "--out",
                                      str(tmp_path / "out"), "--progress", "false"])
    assert result.exit_code == 2 and "need at least 2" in result.output


def test_several_targets_need_review_target(review_memory, tmp_path):
    from codemap.errors import CodemapError

    memory, reviews = review_memory
    both = tmp_path / "both.db"
    first = memory.parent / "drug_targets_small.tsv"
    second = tmp_path / "drug_targets_copy.tsv"
    second.write_bytes(first.read_bytes())
    with MappingMemory(both) as db:
        for path in (first, second):
            db.store(reviews, load_vocab_file(path), source="x.xlsx", spec=str(path))
    with pytest.raises(CodemapError, match="choose one with --review-target"):
        load_reviews(_config(both, tmp_path / "a"), tmp_path / "a")
    data, config = load_reviews(_config(both, tmp_path / "b", review_target=str(second)), tmp_path / "b")
    assert data.vocab.id == "drug_targets_copy" and config.eval_target == str(second)
    assert data.counts["sources_approved"] == N_SOURCES


def test_hard_negatives_enter_the_term_loss_only():
    import torch

    from codemap.train.losses import CoderLoss, MultiSimilarityLoss, RelationMSLoss

    torch.manual_seed(0)
    loss = CoderLoss(MultiSimilarityLoss(), RelationMSLoss(1, 8))
    emb, labels = torch.randn(6, 8), torch.tensor([0, 0, 1, 0, 0, 1])  # 3 heads, 3 tails
    relations = torch.zeros(3, dtype=torch.long)
    plain = loss(emb, labels, relations)
    # Near copies of two heads with other labels: negatives no mining can skip.
    negatives = emb[:2] + 0.01 * torch.randn(2, 8)
    mixed = loss(torch.cat([emb, negatives]), torch.cat([labels, torch.tensor([7, 8])]), relations)
    assert mixed["relation"].item() == pytest.approx(plain["relation"].item())
    assert mixed["term"].item() * 8 > plain["term"].item() * 6  # summed over anchors: it grew
