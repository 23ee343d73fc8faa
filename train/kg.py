"""The training knowledge graph and the batch sampler.

A graph is built from one or more `codemap.vocab.Vocabulary` objects: their concepts, names and
relations (head, relation, tail codes). Concepts that take part in no relation get a synonym-only
triplet (c, "synonym", c), so a vocabulary without relations still trains.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from codemap.errors import CodemapError
from codemap.files import sha256_text
from codemap.vocab import Vocabulary

SYNONYM = "synonym"
_BRACKETS = re.compile(r"\s*[\[(][^\])]*[\])]")
_DASHES = re.compile(r"[-‐‑‒–—]+")
_SPACES = re.compile(r"\s+")


def clean_name(name: str, drop_brackets: bool = False) -> str:
    """The reference's name cleaning: lower-case, drop a trailing " NOS", dashes to spaces,
    optionally drop bracketed text (off by default: in LOINC names the brackets hold the
    property, e.g. "[Mass/volume]")."""
    text = name.lower()
    if drop_brackets:
        text = _BRACKETS.sub(" ", text)
    text = re.sub(r"(,\s*|\s+)nos$", "", text.strip())
    text = _DASHES.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


@dataclass
class KnowledgeGraph:
    """Concepts with their names (CSR layout: concept c owns names[offsets[c]:offsets[c+1]])
    and triplets (head concept, relation id, tail concept) as an int64 (T, 3) array."""

    concepts: list[str]  # "VOCAB:code"
    names: list[str]
    offsets: np.ndarray
    relation_labels: list[str]
    triplets: np.ndarray
    removed_names: int = 0  # names dropped by the holdout
    # What a name means, when that is not its own concept: a reviewed source is a concept of its
    # own (one name, its text) labelled with the target it was approved for. None: identity.
    labels: np.ndarray | None = None
    # Explicit hard negatives per concept (CSR like names): concepts a reviewer rejected for it.
    negative_offsets: np.ndarray | None = None
    negatives: np.ndarray | None = None
    # Concepts that enter the relation loss only (LOINC axis parts, when asked): a query names a
    # coded concept, never a bare part, so a part must not be the term loss's negative of the
    # codes it belongs to. Their names get label -(concept + 1), which the term losses skip.
    relation_only: np.ndarray | None = None

    @property
    def content_hash(self) -> str:
        """Identifies the training data (recorded in the model manifest)."""
        triplets = ",".join(map(str, self.triplets.ravel()[:200000]))
        extra = [] if self.labels is None else [",".join(map(str, self.labels)),
                                                ",".join(map(str, self.negatives))]
        return sha256_text("\n".join(self.concepts), "\n".join(self.names),
                           "\n".join(self.relation_labels), triplets, *extra)

    def label_of(self, concepts: np.ndarray) -> np.ndarray:
        labels = concepts if self.labels is None else self.labels[concepts]
        if self.relation_only is None:
            return labels
        return np.where(self.relation_only[concepts], -(concepts + 1), labels)

    def negatives_of(self, concept: int) -> np.ndarray:
        if self.negatives is None:
            return np.zeros(0, np.int64)
        return self.negatives[self.negative_offsets[concept]:self.negative_offsets[concept + 1]]

    def names_of(self, concept: int) -> list[str]:
        return self.names[self.offsets[concept]:self.offsets[concept + 1]]

    def summary(self) -> dict:
        out = {"concepts": len(self.concepts), "names": len(self.names),
               "triplets": int(len(self.triplets)), "relations": len(self.relation_labels),
               "holdout_removed": self.removed_names}
        if self.relation_only is not None:
            out["relation_only_concepts"] = int(self.relation_only.sum())
        if self.negatives is not None:
            out["hard_negatives"] = int(len(self.negatives))
        return out


def build_graph(vocabularies: list[Vocabulary], *, holdout: set[str] = frozenset(),
                drop_brackets: bool = False,
                relation_only_types: frozenset[str] = frozenset()) -> KnowledgeGraph:
    """Merge vocabularies into one graph. Names are cleaned and de-duplicated per concept; a name
    whose cleaned form is in `holdout` (already cleaned) is removed and counted. Concepts left
    without names, and triplets touching them, are dropped. A concept all of whose names have a
    name_type in `relation_only_types` (e.g. {"part"}) is marked relation-only.

    Raises CodemapError when nothing is left to train on.
    """
    names = pd.concat([v.names.reindex(columns=["code", "name", "name_type"], fill_value="")
                       .assign(code=v.id + ":" + v.names["code"]) for v in vocabularies],
                      ignore_index=True)
    names["clean"] = [clean_name(n, drop_brackets) for n in names["name"]]
    names = names[names["clean"] != ""].drop_duplicates(subset=["code", "clean"])
    held = names["clean"].isin(holdout)
    removed = int(held.sum())
    names = names[~held].sort_values("code", kind="stable")
    concepts = names["code"].drop_duplicates().tolist()
    position = {code: i for i, code in enumerate(concepts)}
    counts = names.groupby("code", sort=False).size().reindex(concepts).to_numpy()
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    relations = _relations(vocabularies, position)
    labels = sorted(set(relations["relation"])) + [SYNONYM]
    rel_id = {label: i for i, label in enumerate(labels)}
    triplets = np.stack([relations["head"].map(position).to_numpy(dtype=np.int64),
                         relations["relation"].map(rel_id).to_numpy(dtype=np.int64),
                         relations["tail"].map(position).to_numpy(dtype=np.int64)], axis=1) \
        if len(relations) else np.zeros((0, 3), np.int64)
    linked = np.zeros(len(concepts), dtype=bool)
    linked[triplets[:, 0]] = True
    linked[triplets[:, 2]] = True
    alone = np.flatnonzero(~linked)
    synonym = np.stack([alone, np.full_like(alone, rel_id[SYNONYM]), alone], axis=1)
    triplets = np.concatenate([triplets, synonym]).astype(np.int64)
    if len(triplets) == 0:
        raise CodemapError("the knowledge graph is empty: no names left to train on "
                           "(check --kg and --holdout)")
    relation_only = None
    if relation_only_types:
        other = set(names[~names["name_type"].isin(relation_only_types)]["code"])
        relation_only = np.array([code not in other for code in concepts], dtype=bool)
    return KnowledgeGraph(concepts, names["clean"].tolist(), offsets, labels, triplets, removed,
                          relation_only=relation_only)


def _relations(vocabularies: list[Vocabulary], position: dict[str, int]) -> pd.DataFrame:
    frames = []
    for vocab in vocabularies:
        if vocab.relations is None or vocab.relations.empty:
            continue
        rel = vocab.relations[["head", "relation", "tail"]].copy()
        rel["head"] = vocab.id + ":" + rel["head"]
        rel["tail"] = vocab.id + ":" + rel["tail"]
        frames.append(rel)
    if not frames:
        return pd.DataFrame(columns=["head", "relation", "tail"])
    rel = pd.concat(frames, ignore_index=True).drop_duplicates()
    keep = rel["head"].isin(position) & rel["tail"].isin(position)
    return rel[keep].reset_index(drop=True)


@dataclass
class Batch:
    """2k names (k head names, then k tail names), then the explicit hard negatives of the heads;
    the label of every name, and the k relation ids."""

    names: list[str]
    labels: np.ndarray  # (2k + negatives,) label (concept meant) of each name
    relations: np.ndarray  # (k,)
    triplets: np.ndarray  # (k,) triplet row numbers, for tests and logs
    negatives: int = 0  # how many of the names, at the end, are explicit hard negatives


class TripletSampler:
    """k triplet rows per batch: k/m distinct triplets, each repeated m times (so every anchor has
    positives, otherwise the MS loss has nothing to pull together), with a fresh random name of
    the head and of the tail drawn for every row.

    When the graph has explicit hard negatives (a reviewer's rejected candidates), up to
    `hard_negatives` of them per distinct triplet's head join the batch, one random name each,
    after the 2k names: in-batch negatives are mostly easy, and the MS loss can only mine the
    hard pairs that are in the batch.

    The batch for a step is a pure function of (seed, rank, step): resuming at step s replays
    exactly the batches an uninterrupted run would have seen, on every rank, with no RNG state to
    save.
    """

    def __init__(self, graph: KnowledgeGraph, k: int, m: int, seed: int = 0, rank: int = 0,
                 hard_negatives: int = 0):
        if m < 2 or m * m > k or k % m:
            raise CodemapError(f"--batch-triplets {k} and --repeats {m}: need 2 ≤ m ≤ √k and k "
                               f"divisible by m (the paper uses k=128, m=8)")
        self.graph, self.k, self.m, self.seed, self.rank = graph, k, m, seed, rank
        self.hard_negatives = hard_negatives

    def batch(self, step: int) -> Batch:
        rng = np.random.default_rng([self.seed, self.rank, step])
        graph = self.graph
        distinct = self.k // self.m
        total = len(graph.triplets)
        chosen = rng.choice(total, size=distinct, replace=total < distinct)
        rows = np.repeat(chosen, self.m)
        heads = graph.triplets[rows, 0]
        tails = graph.triplets[rows, 2]
        concepts = np.concatenate([heads, tails])
        counts = graph.offsets[concepts + 1] - graph.offsets[concepts]
        picks = graph.offsets[concepts] + (rng.random(len(concepts)) * counts).astype(np.int64)
        # Drawn after the names, so a graph without negatives gets exactly the batches it always had.
        negatives = self._negatives(graph.triplets[chosen, 0], rng)
        sizes = graph.offsets[negatives + 1] - graph.offsets[negatives]
        picks = np.concatenate([picks, graph.offsets[negatives]
                                + (rng.random(len(negatives)) * sizes).astype(np.int64)])
        return Batch([graph.names[i] for i in picks],
                     graph.label_of(np.concatenate([concepts, negatives])),
                     graph.triplets[rows, 1], rows, len(negatives))

    def _negatives(self, heads: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.hard_negatives <= 0 or self.graph.negatives is None:
            return np.zeros(0, np.int64)
        found = []
        for head in heads:
            pool = self.graph.negatives_of(head)
            if len(pool) > self.hard_negatives:
                pool = rng.choice(pool, size=self.hard_negatives, replace=False)
            found.append(pool)
        return np.concatenate(found).astype(np.int64) if found else np.zeros(0, np.int64)

    def state_dict(self) -> dict:
        return {"seed": self.seed, "k": self.k, "m": self.m}
