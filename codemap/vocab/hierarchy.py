"""Uphill mapping: when no candidate is likely an equivalent, propose the nearest broader concept.

A local term more specific than anything in the target ("cholera due to serotype O139") gets
candidates that are siblings of each other; the concept above them ("Cholera") is a correct,
if broader, mapping. The hierarchy comes from the vocabulary's is-a relations (store imports:
OMOP CONCEPT_ANCESTOR one level up, SNOMED/OBO/ICD-10-CM is_a), or, for an ICD-10-CM table
without relations, from its codes: a code's parent is its longest prefix that is a code too
(E11.65 → E11.6 → E11). The proposal is one extra row per source, without a rank, with
equivalence `wider` (SSSOM skos:broadMatch, Usagi WIDER) and an explanation naming the
candidates it covers.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_DEPTH = 2  # is-a steps searched above each candidate: further up is too broad to help
TOP_N = 3  # candidates whose common ancestor is looked for
BROADER_EQUIVALENCE = "wider"  # the target is wider than the source
BROADER_NOTE = "broader: is-a ancestor of"  # starts the explanation of a proposal


@dataclass(frozen=True)
class Hierarchy:
    """A vocabulary's is-a parents and its concept names, read once per run (`Mapper.load`):
    proposals are made block by block, and the whole-vocabulary maps must not be rebuilt for each."""

    parents: dict[str, list[str]]
    names: dict[str, str]  # code → preferred name, for the proposal rows

    @classmethod
    def of(cls, vocab) -> "Hierarchy":
        parents = parent_map(vocab)
        names = dict(zip(vocab.concepts["code"], vocab.concepts["name"])) if parents else {}
        return cls(parents, names)


def parent_map(vocab) -> dict[str, list[str]]:
    """code → its direct broader codes, from is-a relations or ICD-10 code prefixes."""
    parents: dict[str, list[str]] = {}
    relations = vocab.relations
    if relations is not None and len(relations):
        kind = relations["relation"].astype(str).str.lower().str.replace(r"[\s_\-]", "", regex=True)
        for head, tail in relations.loc[kind == "isa", ["head", "tail"]].itertuples(index=False):
            parents.setdefault(str(head), []).append(str(tail))
    if not parents and re.search(r"ICD-?10", vocab.id, re.IGNORECASE):
        codes = set(vocab.concepts["code"])
        for code in codes:
            parent = _prefix_parent(code, codes)
            if parent:
                parents[code] = [parent]
    return parents


def _prefix_parent(code: str, codes: set) -> str | None:
    stem = code
    while len(stem) > 1:
        stem = stem[:-1].rstrip(".")
        if stem in codes:
            return stem
    return None


def ancestors(code: str, parents: dict[str, list[str]], depth: int = MAX_DEPTH) -> dict[str, int]:
    """Every broader code within `depth` is-a steps, with its distance."""
    found: dict[str, int] = {}
    frontier = [code]
    for level in range(1, depth + 1):
        frontier = [p for c in frontier for p in parents.get(c, ()) if p not in found]
        for p in frontier:
            found.setdefault(p, level)
    return found


def nearest_broader(codes: list[str], parents: dict[str, list[str]]) -> tuple[str, list[str]] | None:
    """The ancestor above most of `codes` (candidates in rank order; a candidate counts as
    covering itself, so a broader candidate can be the answer), nearest first; with no ancestor
    shared by two of them, the top candidate's parent. Returns (code, codes covered)."""
    above = [ancestors(c, parents) for c in codes]
    reach = [{c: 0, **r} for c, r in zip(codes, above)]
    best = None
    for ancestor in dict.fromkeys(a for r in above for a in r):
        covered = [c for c, r in zip(codes, reach) if ancestor in r]
        distance = min(r[ancestor] for r in reach if ancestor in r)
        key = (len(covered), -distance, -codes.index(covered[0]))
        if best is None or key > best[0]:
            best = (key, ancestor, covered)
    if best is None or (best[0][0] < 2 and codes[0] not in best[2]):
        return None
    return best[1], best[2]


def propose_broader(candidates: pd.DataFrame, hierarchy: Hierarchy, below: float) -> pd.DataFrame:
    """Propose a broader concept for each source whose top confidence is below `below` (a row
    of its own, or the candidate row that already is that concept; its explanation starts with
    BROADER_NOTE). Needs `confidence`; no hierarchy, no proposals."""
    parents, names = hierarchy.parents, hierarchy.names
    if not parents or "confidence" not in candidates:
        return candidates
    candidates = candidates.copy()
    if "equivalence" not in candidates:
        candidates["equivalence"] = ""
    ranked = candidates[candidates["rank"].notna()]
    added = []
    for _, group in ranked.groupby("source_row", sort=False):
        group = group.sort_values("rank")
        top = group.iloc[0]
        if not top["confidence"] < below:
            continue
        codes = list(group["target_code"].astype(str).iloc[:TOP_N])
        found = nearest_broader(codes, parents)
        if found is None:
            continue
        code, covered = found
        why = f"{BROADER_NOTE} {', '.join(c for c in covered if c != code)}"
        present = group.index[group["target_code"].astype(str) == code]
        if len(present):  # the broader concept is a candidate already: say so on its row
            candidates.loc[present, "equivalence"] = BROADER_EQUIVALENCE
            candidates.loc[present, "explanation"] = why + "; " + candidates.loc[present, "explanation"]
            continue
        row = top.copy()
        for column in ("rank", "score", "confidence", "encoder_score", "lexical_score"):
            if column in row.index:
                row[column] = pd.NA if column == "rank" else np.nan
        row["target_code"], row["target_name"], row["matched_name"] = code, names.get(code, ""), ""
        row["explanation"] = why
        row["equivalence"] = BROADER_EQUIVALENCE
        added.append(row)
    if not added:
        return candidates
    out = pd.concat([candidates, pd.DataFrame(added)], ignore_index=True)
    out["rank"] = out["rank"].astype("Int64")
    out = out.sort_values(["source_row", "rank"], kind="stable", na_position="last")
    return out.reset_index(drop=True)
