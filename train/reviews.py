"""Site tuning from reviews: a mapping memory's decisions → a training graph for the one trainer
(train/loop.py), a seeded held-out split, and the before/after report.

    codemap train --from-reviews mappings.db --base default --out runs/site-tuned --steps 60

Each reviewed source becomes a concept of its own whose one name is its text and whose label is
the target a person approved, so the multi-similarity loss pulls the text onto that target's
names; the candidates the reviewer rejected are the source's explicit hard negatives (the
sampler puts them into its batch). Approvals made by `apply --approve-above` are left out: they
are the model's own rank 1, not a person's decision. The held-out sources (grouped by normalised
text, so one string never sits on both sides) are ranked before and after training against the
target vocabulary recorded in the memory, by the same `evaluate_gold` that `codemap eval` runs.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from codemap.errors import CodemapError
from codemap.files import atomic_path
from codemap.review import MappingMemory
from codemap.vocab import SYNONYM_SEPARATOR, Vocabulary, load_target

from .config import TrainConfig
from .kg import SYNONYM, KnowledgeGraph

log = logging.getLogger(__name__)

HELDOUT_FILE = "heldout.tsv"
SPLIT_FILE = "split.tsv"
REPORT_FILE = "report.json"
METRICS = ("acc@1", "acc@10", "mrr")


@dataclass
class ReviewData:
    """The training graph, the held-out sources and what was counted on the way."""

    graph: KnowledgeGraph
    heldout: pd.DataFrame  # source_code, source_text, target_code ("|"-joined approved codes)
    target_spec: str
    store_dir: str
    vocab: Vocabulary
    counts: dict = field(default_factory=dict)


def load_reviews(config: TrainConfig, out: Path) -> tuple[ReviewData, TrainConfig]:
    """Read the memory, split its reviewed sources, build the graph, write OUT/split.tsv and
    OUT/heldout.tsv; returns the data and `config` with its evaluation pointed at the held-out
    sources. Raises CodemapError for a missing or foreign file, or too few usable reviews."""
    decisions, spec, store_dir, vocab = read_memory(config)
    sources, counts = reviewed_sources(decisions, vocab)
    train_keys, held_keys = split_sources(sources, config.heldout_share, config.split_seed)
    train_part = sources[sources["text_key"].isin(train_keys)]
    heldout = sources[sources["text_key"].isin(held_keys)]
    graph = review_graph(train_part, vocab)
    # A next round's new strings often map to concepts already reviewed: say how often here.
    trained_targets = {codes[0] for codes in train_part["approved"]}
    counts.update(train_sources=len(train_part), heldout_sources=len(heldout),
                  train_hard_negatives=int(train_part["negatives"].map(len).sum()),
                  heldout_target_also_trained=int(heldout["approved"].map(
                      lambda codes: bool(set(codes) & trained_targets)).sum()))
    held_table = pd.DataFrame({"source_code": heldout["source_code"],
                               "source_text": heldout["source_text"],
                               "target_code": heldout["approved"].map(SYNONYM_SEPARATOR.join)})
    split = pd.concat([train_part.assign(part="train"), heldout.assign(part="heldout")])
    split = split.assign(target_code=split["approved"].map(SYNONYM_SEPARATOR.join),
                         rejected=split["negatives"].map(SYNONYM_SEPARATOR.join))
    _write_tsv(split[["part", "source_code", "source_text", "target_code", "rejected"]],
               out / SPLIT_FILE)
    _write_tsv(held_table, out / HELDOUT_FILE)
    config = replace(config, eval_file=str(out / HELDOUT_FILE), eval_target=spec,
                     eval_gold_col="target_code", eval_text_cols=("source_text",),
                     store_dir=store_dir)
    return ReviewData(graph, held_table, spec, store_dir, vocab, counts), config


def read_memory(config: TrainConfig) -> tuple[pd.DataFrame, str, str, Vocabulary]:
    """(decisions for one target, target spec, store folder, the vocabulary loaded from them)."""
    path = Path(config.from_reviews)
    if not path.is_file():
        raise CodemapError(f"--from-reviews {path}: no such file; write one with "
                           f"`codemap apply WORKBOOK -o OUT --memory {path}`")
    with MappingMemory(path) as memory:
        known = memory.vocabularies()
        if known.empty:
            raise CodemapError(f"{path}: the mapping memory holds no decisions yet")
        if config.review_target:
            spec, store_dir = config.review_target, config.store_dir
            vocab = load_target(spec, None, store_dir or None)
            if vocab.id not in set(known["target_vocab"]):
                raise CodemapError(f"{path}: no decisions for {vocab.id} (it holds "
                                   f"{', '.join(known['target_vocab'])}); check --review-target")
        else:
            if len(known) > 1:
                raise CodemapError(f"{path}: decisions for {', '.join(known['target_vocab'])}; "
                                   f"choose one with --review-target")
            row = known.iloc[0]
            if not row["target_spec"]:
                raise CodemapError(f"{path}: does not record where {row['target_vocab']} was loaded "
                                   f"from (an older codemap wrote it); pass --review-target")
            spec, store_dir = row["target_spec"], config.store_dir or row["store_dir"]
            vocab = load_target(spec, None, store_dir or None)
            if row["target_hash"] and row["target_hash"] != vocab.content_hash:
                log.warning("%s has changed since the reviews were stored; reviews whose target "
                            "is gone are left out", spec)
        decisions = memory.recall(vocab.id)
    return decisions, spec, store_dir, vocab


def reviewed_sources(decisions: pd.DataFrame, vocab: Vocabulary) -> tuple[pd.DataFrame, dict]:
    """One row per source with a person's approval: its approved target codes (first = the one
    trained on) and its rejected codes (hard negatives), both restricted to the vocabulary."""
    known = set(vocab.concepts["code"])
    rows = decisions.assign(in_target=decisions["target_code"].isin(known),
                            manual=decisions["automatic"] == 0)
    approved = rows[(rows["decision"] == "approved") & rows["manual"] & rows["in_target"]]
    rejected = rows[(rows["decision"] == "rejected") & rows["in_target"]]
    keys = ["source_code", "source_key"]
    sources = (approved.groupby(keys, sort=True)
               .agg(source_text=("source_text", "first"), approved=("target_code", list))
               .reset_index())
    negatives = rejected.groupby(keys)["target_code"].agg(list)
    sources["negatives"] = [
        [c for c in dict.fromkeys(negatives.get((code, key), [])) if c not in set(ok)]
        for code, key, ok in zip(sources["source_code"], sources["source_key"], sources["approved"])]
    sources["text_key"] = sources["source_key"]
    counts = {"decisions": len(decisions),
              "sources_approved": len(sources),
              "automatic_left_out": int(((rows["decision"] == "approved") & ~rows["manual"]).sum()),
              "not_in_target_left_out": int((~rows["in_target"]).sum()),
              "sources_with_several_targets": int((sources["approved"].map(len) > 1).sum()),
              "sources_with_hard_negatives": int((sources["negatives"].map(len) > 0).sum())}
    return sources, counts


def split_sources(sources: pd.DataFrame, share: float, seed: int) -> tuple[set, set]:
    """(train, held-out) sets of normalised source texts: a seeded permutation of the sorted
    texts, `share` of them held out (at least one on each side)."""
    texts = sorted(set(sources["text_key"]))
    if not 0 < share < 1:
        raise CodemapError(f"--heldout-share {share}: use a share between 0 and 1, e.g. 0.2")
    if len(texts) < 2:
        raise CodemapError(f"{len(texts)} reviewed source(s) with an approved target: need at "
                           f"least 2 (one to train on, one to hold out)")
    order = np.random.default_rng(seed).permutation(len(texts))
    n_held = min(max(1, round(share * len(texts))), len(texts) - 1)
    held = {texts[i] for i in order[:n_held]}
    return set(texts) - held, held


def review_graph(sources: pd.DataFrame, vocab: Vocabulary) -> KnowledgeGraph:
    """Target concepts (approved or rejected) with every vocabulary name, then one concept per
    reviewed source (its text) labelled with its first approved target; a (source, synonym,
    target) triplet per source and the rejected targets as the source's hard negatives."""
    targets = sorted({c for codes in sources["approved"] for c in codes[:1]}
                     | {c for codes in sources["negatives"] for c in codes})
    position = {code: i for i, code in enumerate(targets)}
    vocab_names = vocab.names[vocab.names["code"].isin(position)]
    vocab_names = vocab_names.assign(name=vocab_names["name"].str.split().str.join(" "))
    vocab_names = vocab_names[vocab_names["name"] != ""].drop_duplicates(["code", "name"])
    by_code = vocab_names.groupby("code")["name"].agg(list)
    names = [by_code[code] for code in targets]
    names += [[" ".join(str(text).split())] for text in sources["source_text"]]
    concepts = [f"{vocab.id}:{c}" for c in targets]
    concepts += [f"review:{code}:{key}" for code, key in zip(sources["source_code"], sources["source_key"])]
    first = np.array([position[codes[0]] for codes in sources["approved"]], dtype=np.int64)
    source_ids = np.arange(len(targets), len(concepts), dtype=np.int64)
    labels = np.concatenate([np.arange(len(targets)), first]).astype(np.int64)
    negatives = [[]] * len(targets) + [[position[c] for c in codes] for codes in sources["negatives"]]
    counts = [len(n) for n in names]
    return KnowledgeGraph(
        concepts=concepts, names=[n for group in names for n in group],
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        relation_labels=[SYNONYM],
        triplets=np.stack([source_ids, np.zeros_like(source_ids), first], axis=1),
        labels=labels,
        negative_offsets=np.concatenate([[0], np.cumsum([len(n) for n in negatives])]).astype(np.int64),
        negatives=np.array([i for n in negatives for i in n], dtype=np.int64))


def write_report(out: Path, data: ReviewData, config: TrainConfig, summary: dict) -> dict:
    """OUT/report.json: counts, settings, and the held-out scores before and after training for
    the embedding ranking alone and for `codemap map`'s default ranking."""
    before, after = summary["evaluations"][0], summary["evaluations"][-1]
    scores = {}
    for ranking in ("encoder", "default"):
        b, a = before["rankings"][ranking], after["rankings"][ranking]
        scores[ranking] = {"method": b["method"], "before": b, "after": a,
                           "gain": {m: round(a[m] - b[m], 4) for m in METRICS}}
    report = {"memory": str(Path(config.from_reviews).resolve()), "target": data.target_spec,
              "target_version": data.vocab.version, "base": config.base,
              "model": str(out / "model"), "counts": data.counts,
              "heldout": {"share": config.heldout_share, "split_seed": config.split_seed,
                          "n": before["n"], "file": str(out / HELDOUT_FILE)},
              "training": {"steps": config.steps, "lr": config.lr, "batch_triplets":
                           config.batch_triplets, "repeats": config.repeats,
                           "hard_negatives": config.hard_negatives, "seed": config.seed,
                           "train_seconds": summary["train_seconds"], "device": summary["device"]},
              "scores": scores}
    with atomic_path(out / REPORT_FILE) as tmp:
        tmp.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def format_report(report: dict) -> str:
    """The report's scores as a Markdown table (printed by `codemap train --from-reviews`)."""
    n = report["heldout"]["n"]
    lines = [f"held-out reviews: {n} sources of {report['counts']['sources_approved']} "
             f"(share {report['heldout']['share']}, split seed {report['heldout']['split_seed']}), "
             f"target {report['target']}",
             "| ranking | acc@1 before | acc@1 after | acc@10 before | acc@10 after | MRR before | MRR after |",
             "|---|---|---|---|---|---|---|"]
    titles = {"encoder": "embedding alone", "default": "codemap map default"}
    for name, s in report["scores"].items():
        b, a = s["before"], s["after"]
        lines.append(f"| {titles[name]} ({s['method']}) | {b['acc@1']:.3f} | {a['acc@1']:.3f} | "
                     f"{b['acc@10']:.3f} | {a['acc@10']:.3f} | {b['mrr']:.3f} | {a['mrr']:.3f} |")
    lines.append(f"report: {Path(report['model']).parent / REPORT_FILE}; model: {report['model']}")
    return "\n".join(lines)


def _write_tsv(frame: pd.DataFrame, path: Path) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, sep="\t", index=False, encoding="utf-8")
