"""Re-check a mapping memory against a new release of its target (`codemap memory recheck`).

A mapping outlives the release it was made on: codes are deprecated, replaced, split or renamed.
After the new release is imported under the same name, every approved decision the memory holds
for that target is compared, code and name, with it and classified:

- unchanged: the code is there, active, its name the same (case, accents and spacing aside);
- renamed: the code is there and active under another name;
- replaced: deprecated or gone, and the release itself names what replaces it (LOINC MAP_TO,
  RxNorm's remapped RXCUIs, SNOMED CT's historical associations, OMOP's "Concept replaced by" and
  "Maps to"; the store's `replacements` table), followed to an active code;
- split: an ICD-10 code gone, or now a category and no longer a code, whose place the release
  fills with codes below it (S30.1XXA → S30.11XA, S30.12XA, S30.13XA: a placeholder X became a
  digit; B37.3 → B37.31, B37.32);
- retired: deprecated or gone without any of these.

Every source with a mapping that is not unchanged becomes one group of a review workbook in the
shape `codemap map` writes (so `codemap apply` reads it back): its stored decisions (the memory
column says what changed and what was decided before, by whom, on which release), the
replacements first, then codemap's own ranked candidates for the stored source text. No
decision is pre-filled, so applying the reviewed workbook with `--memory` changes only the
sources a reviewer decided on (approving a replacement, or the stored target again to confirm a
new name): their decisions are stored as the workbook has them, and the ones they replace move
to the memory's history. A source left undecided keeps its decisions and is listed again by the
next re-check.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from .. import __version__
from ..errors import CodemapError
from ..read.readers import SourceTable
from ..vocab.store import VocabStore
from ..vocab.store.importers.base import REPLACEMENT_COLUMNS
from ..vocab.target import load_target
from ..vocab.vocabulary import Vocabulary, deprecated_codes
from ..write.writers import REVIEW_COLUMNS
from .apply import MEMORY_SITE
from .memory import MEMORY_COLUMN, MappingMemory, site_of

# Most urgent first: the order of the groups in the workbook and of the counts in the summary.
STATUSES = ("retired", "split", "replaced", "renamed", "unchanged")
# Replacement relations, most telling first, whatever publisher named them.
RELATION_ORDER = ("REPLACED BY", "Concept replaced by", "MAP_TO", "remapped to", "SAME AS",
                  "Concept same_as to", "POSSIBLY EQUIVALENT TO", "Concept poss_eq to",
                  "POSSIBLY REPLACED BY", "PARTIALLY EQUIVALENT TO", "Maps to", "ALTERNATIVE",
                  "Concept alt_to to", "WAS A", "Concept was_a to", "MOVED TO")
CHAIN_DEPTH = 5  # replacements of replacements followed this far to reach an active code
MAX_LISTED = 30  # replacement rows per mapping (a split into more is said, not all listed)
ICD10 = re.compile(r"^[A-Z][0-9][0-9A-Z](\.[0-9A-Z]{1,4})?$")
COLUMNS = ["source_row", "source_code", "source_text", "rank", "target_code", "target_name",
           "matched_name", "score", "confidence", "encoder_score", "lexical_score", "explanation",
           MEMORY_COLUMN, *REVIEW_COLUMNS]
# (sources as a SourceTable) → (their candidates as `Mapper.map_block` returns them, settings)
Ranker = Callable[[SourceTable], tuple[pd.DataFrame, dict]]


@dataclass
class RecheckResult:
    """The classified mappings, the review workbook's rows and run sheet, the counts."""

    mappings: pd.DataFrame  # each approved decision with `status`, `why` and `successors`
    workbook: pd.DataFrame
    run: dict
    counts: dict = field(default_factory=dict)  # mappings per status


@dataclass(frozen=True)
class Release:
    """What the new release says about codes: names, the deprecated ones, its replacements, and
    for an ICD-10 family vocabulary its codes by category (for splits)."""

    vocab: Vocabulary
    names: dict
    stale: set
    replacements: pd.DataFrame
    successors: dict  # code → [(relation, replacement, note)] of the replacements table
    reasons: dict  # code → why the release retired it (its publisher's words), where it says
    billable: dict  # code → "yes"/"no" where the vocabulary says (the icd10cm importer)
    by_category: dict  # "S30" → its codes, for an ICD-10 family vocabulary; else empty

    @classmethod
    def of(cls, vocab: Vocabulary, replacements: pd.DataFrame) -> "Release":
        concepts = vocab.concepts
        status = concepts["status"] if "status" in concepts else pd.Series("", index=concepts.index)
        stale = deprecated_codes(vocab) | set(concepts.loc[status == "deprecated", "code"])
        billable = (dict(zip(concepts["code"], concepts["billable"]))
                    if "billable" in concepts else {})
        codes = concepts["code"].astype(str)
        by_category = {}
        if len(codes) and codes.str.match(ICD10.pattern).mean() >= 0.9:
            by_category = codes.groupby(codes.str[:3]).agg(list).to_dict()
        said = replacements[~replacements["reason"].isin(["", "deprecated"])]  # "deprecated": said
        reasons = said.groupby("code")["reason"].agg(lambda r: ", ".join(dict.fromkeys(r))).to_dict()
        return cls(vocab, dict(zip(codes, concepts["name"])), stale, replacements,
                   _successors(replacements), reasons, billable, by_category)


def _successors(replacements: pd.DataFrame) -> dict:
    """code → [(relation, replacement, note)] of the replacements table, most telling first."""
    named = replacements[replacements["replacement"] != ""]
    order = {relation: i for i, relation in enumerate(RELATION_ORDER)}
    named = named.assign(_order=named["relation"].map(order).fillna(len(order)))
    found: dict = {}
    for code, relation, replacement, note in named.sort_values(["_order", "replacement"])[
            ["code", "relation", "replacement", "note"]].itertuples(index=False):
        found.setdefault(code, []).append((relation, replacement, note))
    return found


def recheck_memory(memory: str | Path, target: str, *, site: str | None = None,
                   store_dir: str | Path | None = None, rank: Ranker | None = None) -> RecheckResult:
    """Classify every approved decision `memory` holds for `target` (a store name, as imported
    again with the new release) against that release, and build the review workbook of those
    that need attention; `rank` adds codemap's candidates for each (None: replacements only).

    Raises CodemapError when the memory does not exist, holds no decisions for the target, or
    holds several sites' and `site` names none of them.
    """
    if not Path(memory).exists():
        raise CodemapError(f"{memory}: no such mapping memory")
    vocab = load_target(target, store_dir=store_dir)
    with MappingMemory(memory) as store:
        stored = store.recall(vocab.id)
    if stored.empty:
        raise CodemapError(f"{memory}: no decisions for target {vocab.id!r}; re-check the target "
                           f"the decisions were made on, imported again under its name")
    stored = _one_site(stored.assign(site=site_of(stored)), site, memory)
    release = Release.of(vocab, _replacements_of(vocab, target, store_dir))
    mappings = classify(stored[stored["decision"] == "approved"], release)
    listed = mappings[mappings["status"] != "unchanged"]
    groups = _groups(stored, listed, release)
    settings = {}
    if rank is not None and len(groups):
        candidates, settings = rank(_sources(groups, memory))
        groups = _with_candidates(groups, candidates)
    counts = {status: int((mappings["status"] == status).sum()) for status in STATUSES}
    run = _run_sheet(memory, target, store_dir, stored, release, counts, listed, settings)
    return RecheckResult(mappings, _tidy(groups), run, counts)


def _tidy(groups: pd.DataFrame) -> pd.DataFrame:
    """The workbook's columns: ranks as whole numbers (none on a stored decision's row), scores
    as numbers, text empty where there is none."""
    out = groups.reindex(columns=COLUMNS)
    out["rank"] = pd.to_numeric(out["rank"], errors="coerce").astype("Int64")
    for column in ("score", "confidence", "encoder_score", "lexical_score"):
        out[column] = pd.to_numeric(out[column], errors="coerce")
    text = [c for c in COLUMNS if c not in {"rank", "score", "confidence", "encoder_score",
                                             "lexical_score", "source_row"}]
    out[text] = out[text].astype(object).fillna("").astype(str)
    return out


def _one_site(stored: pd.DataFrame, asked: str | None, memory) -> pd.DataFrame:
    """The decisions of the site re-checked: the one asked for, else the memory's only one."""
    sites = sorted(set(stored["site"]))
    if asked is not None and asked not in sites:
        raise CodemapError(f"{memory}: no decisions of site {asked!r} (sites: {', '.join(sites)})")
    if asked is None and len(sites) > 1:
        raise CodemapError(f"{memory}: decisions of {len(sites)} sites ({', '.join(sites[:5])}); "
                           f"re-check one at a time with --site")
    chosen = asked or sites[0]
    return stored[stored["site"] == chosen].reset_index(drop=True)


def _replacements_of(vocab: Vocabulary, target: str, store_dir) -> pd.DataFrame:
    """The release's replacements table (empty for a file or a built-in vocabulary)."""
    if not vocab.source.startswith("store:"):
        return pd.DataFrame(columns=REPLACEMENT_COLUMNS, dtype=str)
    return VocabStore(store_dir).replacements(target)


# --- classifying ---------------------------------------------------------------------------------

def classify(approved: pd.DataFrame, release: Release) -> pd.DataFrame:
    """`approved` (stored decisions) with `status`, `why`, and `successors`: a list of
    (code, how) to propose instead, best first."""
    found = [_status(code, name, release) for code, name
             in zip(approved["target_code"], approved["target_name"])]
    out = approved.reset_index(drop=True).copy()
    out["status"] = [f[0] for f in found]
    out["why"] = [f[1] for f in found]
    out["successors"] = [f[2] for f in found]
    return out


def _status(code: str, name: str, release: Release) -> tuple[str, str, list]:
    """(status, why, successors) of one stored target code and name in the release."""
    where = f"{release.vocab.id} {release.vocab.version}".strip()
    replaced = _replaced_by(code, release)
    if code in release.names and code not in release.stale:
        below = _below(code, release) if release.billable.get(code) == "no" else []
        if below:
            return "split", f"a category in {where}, not a code: {_count(below)} below it", below
        if replaced:  # still there, but not standard: the publisher points elsewhere
            return "replaced", f"not standard in {where}; {_said(replaced)}", replaced
        if _same_name(name, release.names[code]):
            return "unchanged", "", []
        return "renamed", f"name in {where}: '{release.names[code]}' (was '{name}')", []
    left = (f"deprecated in {where}{_reason(code, release)}" if code in release.names
            else f"no longer in {where}{_reason(code, release)}")
    if replaced:
        return "replaced", f"{left}; {_said(replaced)}", replaced
    below = _below(code, release)
    if below:
        return "split", f"{left}; {_count(below)} in its place", below
    return "retired", f"{left}; the release names no replacement", []


def _replaced_by(code: str, release: Release) -> list[tuple[str, str]]:
    """The active codes the release's replacements lead to from `code` (chains followed), each
    with how (the relation, the publisher's note, the codes passed on the way), most telling
    relation first."""
    found, frontier, seen = {}, [(code, None)], {code}
    for _ in range(CHAIN_DEPTH):
        step = []
        for head, first in frontier:
            for relation, replacement, note in release.successors.get(head, ()):
                said = (relation + (f": {note}" if note else "")
                        + (f" (via {head})" if head != code else ""))
                if replacement in release.names and replacement not in release.stale:
                    found.setdefault(replacement, (first or relation, said))
                elif replacement not in seen:
                    step.append((replacement, first or relation))
                seen.add(replacement)
        frontier = step
    order = {relation: i for i, relation in enumerate(RELATION_ORDER)}
    ranked = sorted(found.items(), key=lambda item: (order.get(item[1][0], len(order)), item[0]))
    return [(successor, how) for successor, (_, how) in ranked]


def _below(code: str, release: Release) -> list[tuple[str, str]]:
    """ICD-10 codes that take the place of `code` in the release: with a seventh character, the
    codes of the same length and extension where its placeholder X now holds a character
    (T40.7X1A → T40.711A, T40.721A); else the codes below it (B37.3 → B37.31, B37.32)."""
    group = release.by_category.get(code[:3], []) if ICD10.match(code) else []
    plain = code.replace(".", "")
    how = f"a code below {code} in {release.vocab.id} {release.vocab.version}".rstrip()
    return [(other, how) for other in sorted(group) if other != code
            and _takes_place(plain, other.replace(".", "")) and _is_code(other, group, release)]


def _takes_place(plain: str, other: str) -> bool:
    """Whether code `other` (dots removed) stands where `plain` stood."""
    if len(plain) == 7:  # a seventh character: the same extension, placeholders filled in
        return (len(other) == 7 and other[6] == plain[6] and other[:3] == plain[:3]
                and all(a in ("X", b) for a, b in zip(plain[3:6], other[3:6])))
    return other.startswith(plain)


def _is_code(other: str, group: list, release: Release) -> bool:
    """A code a record can carry: billable where the release says so, else one with no code
    below it."""
    if release.billable:
        return release.billable.get(other) == "yes"
    bare = other.replace(".", "")
    return not any(o != other and o.replace(".", "").startswith(bare) for o in group)


def _same_name(old: str, new: str) -> bool:
    """Names equal up to case, accents and spacing ("Kienbock" in one release's ASCII file is
    "Kienböck" in the next one's XML): not a change a reviewer needs to see."""
    fold = lambda text: " ".join("".join(c for c in unicodedata.normalize("NFKD", str(text))
                                         if not unicodedata.combining(c)).casefold().split())
    return fold(old) == fold(new)


def _reason(code: str, release: Release) -> str:
    return f" ({release.reasons[code]})" if code in release.reasons else ""


def _said(replaced: list) -> str:
    return f"the release gives {_count(replaced)}: {', '.join(c for c, _ in replaced[:5])}" + (
        ", …" if len(replaced) > 5 else "")


def _count(codes: list) -> str:
    return f"{len(codes)} code{'s' if len(codes) != 1 else ''}"


# --- the workbook --------------------------------------------------------------------------------

def _groups(stored: pd.DataFrame, listed: pd.DataFrame, release: Release) -> pd.DataFrame:
    """One group of rows per source with a mapping needing attention, most urgent first: its
    stored decisions (rank empty), then the replacements (rank 1, 2…)."""
    if listed.empty:
        return pd.DataFrame(columns=COLUMNS)
    urgency = {status: i for i, status in enumerate(STATUSES)}
    listed = listed.assign(_urgency=listed["status"].map(urgency))
    order = (listed.groupby(["source_code", "source_key"], sort=False)["_urgency"].min()
             .reset_index().sort_values(["_urgency", "source_code", "source_key"], kind="stable"))
    keys = ["source_code", "source_key"]
    wanted = stored.merge(order[keys], on=keys)  # the listed sources' stored decisions
    sources = dict(list(wanted.groupby(keys, sort=False)))
    checked = dict(list(listed.groupby(keys, sort=False)))
    rows = []
    for number, key in enumerate(zip(order["source_code"], order["source_key"]), start=2):
        rows += _group(number, sources[key], checked[key], release)
    return pd.DataFrame(rows)


def _group(number: int, source: pd.DataFrame, listed: pd.DataFrame, release: Release) -> list:
    """The rows of one source: each stored decision (what changed, what was decided before),
    then the successors of its mappings that need attention, each once."""
    text = source["source_text"].iloc[-1]
    base = {"source_row": number, "source_code": source["source_code"].iloc[0], "source_text": text}
    status = dict(zip(listed["target_code"], zip(listed["status"], listed["why"])))
    rows, codes = [], set(source["target_code"])
    for r in source.itertuples(index=False):
        state, why = status.get(r.target_code, (None, ""))
        earlier = (f"earlier: {r.decision}{f' ({r.equivalence})' if r.equivalence else ''} on "
                   f"{r.decided_at[:10]} by {r.reviewer or '-'} "
                   f"({r.target_vocab} {r.target_version or 'release not recorded'})")
        # Nothing is pre-filled: a source nobody decides on stays in the memory as it was (and
        # is listed again by the next re-check); one decided on is stored as decided.
        rows.append({**base, "rank": "", "target_code": r.target_code,
                     "target_name": release.names.get(r.target_code, r.target_name),
                     MEMORY_COLUMN: f"{state}: {why}; {earlier}" if state else earlier})
    rank = 0
    for successors in listed["successors"]:
        for successor, how in successors[:MAX_LISTED]:
            if successor in codes:
                continue
            codes.add(successor)
            rank += 1
            rows.append({**base, "rank": rank, "target_code": successor,
                         "target_name": release.names[successor], "explanation": f"replacement: {how}"})
    return rows


def _sources(groups: pd.DataFrame, memory) -> SourceTable:
    """The listed sources as a code list (one row each, in group order) for the ranking."""
    firsts = groups.drop_duplicates("source_row")
    frame = pd.DataFrame({"source_code": firsts["source_code"].astype(str).tolist(),
                          "source_text": firsts["source_text"].astype(str).tolist()})
    return SourceTable(Path(memory), frame, "source_code", ("source_text",), None, None,
                       first_row=int(firsts["source_row"].iloc[0]))


def _with_candidates(groups: pd.DataFrame, candidates: pd.DataFrame) -> pd.DataFrame:
    """Each group followed by its ranked candidates, numbered after its replacements; a
    candidate that is a replacement lends that row its scores instead of repeating it."""
    candidates = candidates[candidates["target_code"].astype(str) != ""]
    scored = ["matched_name", "score", "confidence", "encoder_score", "lexical_score"]
    out = []
    for number, group in groups.groupby("source_row", sort=False):
        group = group.copy()
        found = candidates[candidates["source_row"] == number]
        known = dict(zip(group["target_code"], group.index))
        ranks = pd.to_numeric(group["rank"], errors="coerce")
        last = int(ranks.max()) if ranks.notna().any() else 0
        extra = []
        for c in found.sort_values("rank").to_dict("records"):
            if c["target_code"] in known:
                for column in (s for s in scored if s in c):
                    group.loc[known[c["target_code"]], column] = c[column]
                continue
            last += 1
            extra.append({**{k: c.get(k, "") for k in COLUMNS if k in c}, "rank": last,
                          "source_row": number, MEMORY_COLUMN: "", "decision": "",
                          "equivalence": "", "reviewer": "", "comment": ""})
        out += [group, pd.DataFrame(extra)]
    return pd.concat(out, ignore_index=True)


def _run_sheet(memory, target: str, store_dir, stored: pd.DataFrame, release: Release,
               counts: dict, listed: pd.DataFrame, settings: dict) -> dict:
    """The run sheet: what was re-checked against which release, the counts, and what `codemap
    apply` needs to read the workbook back (target, store, site)."""
    vocab = release.vocab
    return {
        "codemap_version": __version__,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": "memory recheck",
        "source": str(memory),
        "memory": str(memory),
        MEMORY_SITE: stored["site"].iloc[0],
        **{k: v for k, v in settings.items() if not k.startswith("target")},
        "target": vocab.id,
        "target_spec": target,
        **({"store_dir": str(Path(store_dir).resolve())} if store_dir else {}),
        "target_version": vocab.version,
        "target_hash": vocab.content_hash[:16],
        "target_notice": vocab.notice,
        "earlier_releases": ", ".join(sorted(set(stored["target_version"]) - {""})) or "not recorded",
        "replacements_in_release": len(release.replacements),
        "mappings_checked": sum(counts.values()),
        **{f"mappings_{status}": n for status, n in counts.items()},
        "sources_listed": int(listed[["source_code", "source_key"]].drop_duplicates().shape[0]),
        "candidates": "ranked" if settings else "off (--no-candidates)",
    }
