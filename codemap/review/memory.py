"""The mapping memory: reviewed decisions in one SQLite file, reused by the next `codemap map`.

Keyed on (target vocabulary, source code, normalised source text): a source whose code or text
changed is a new source and is reviewed again. `apply --memory` stores every decision that is not
`unchecked` (rejections too: the trainer uses them as hard negatives); `map --memory` pre-fills
known sources with the earlier decision and flags the ones whose target left the vocabulary or
was deprecated in it.
"""
from __future__ import annotations

import re
import sqlite3
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..errors import CodemapError
from ..vocab.vocabulary import Vocabulary

SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    target_vocab TEXT NOT NULL,
    source_code TEXT NOT NULL,
    source_key TEXT NOT NULL,          -- normalised source text
    source_text TEXT NOT NULL,
    target_code TEXT NOT NULL,
    target_name TEXT NOT NULL,
    decision TEXT NOT NULL,
    equivalence TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    comment TEXT NOT NULL,
    automatic INTEGER NOT NULL,
    decided_at TEXT NOT NULL,
    workbook TEXT NOT NULL,
    PRIMARY KEY (target_vocab, source_code, source_key, target_code)
);
CREATE TABLE IF NOT EXISTS vocabularies (  -- where each target was loaded from, for `train --from-reviews`
    target_vocab TEXT PRIMARY KEY,
    target_spec TEXT NOT NULL,         -- a file path (absolute) or a store/built-in name
    store_dir TEXT NOT NULL,           -- the store folder for store names, else empty
    target_version TEXT NOT NULL,
    target_hash TEXT NOT NULL,
    recorded_at TEXT NOT NULL
)
"""
MEMORY_COLUMN = "memory"
REVIEW_FIELDS = ["decision", "equivalence", "reviewer", "comment"]


def normalise_text(text: str) -> str:
    """Case, accents' composition and runs of spaces do not make a new source."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", str(text)).casefold()).strip()


class MappingMemory:
    """An open memory file; use as a context manager so the connection closes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise CodemapError(f"{self.path}: not a codemap mapping memory ({exc})") from None

    def __enter__(self) -> "MappingMemory":
        return self

    def __exit__(self, *exc) -> None:
        self.db.close()

    def store(self, reviews: pd.DataFrame, vocab: Vocabulary, source: str, spec: str = "") -> int:
        """Replace the stored decisions of every reviewed source with the workbook's; returns rows
        stored. Sources left entirely unchecked keep what the memory had. `spec` is the target as
        `apply` loaded it (recorded so the trainer can rank against the same vocabulary)."""
        decided = reviews[(reviews["decision"] != "unchecked") & (reviews["target_code"] != "")]
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        rows = [(vocab.id, r.source_code, normalise_text(r.source_text), r.source_text, r.target_code,
                 r.target_name, r.decision, r.equivalence, r.reviewer, r.comment, int(r.automatic),
                 now, source) for r in decided.itertuples(index=False)]
        keys = {(row[0], row[1], row[2]) for row in rows}
        with self.db:  # one transaction: a failed write leaves the memory as it was
            self.db.executemany("DELETE FROM decisions WHERE target_vocab=? AND source_code=? "
                                "AND source_key=?", sorted(keys))
            self.db.executemany("INSERT OR REPLACE INTO decisions VALUES "
                                "(?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            if spec:
                self.db.execute("INSERT OR REPLACE INTO vocabularies VALUES (?,?,?,?,?,?)",
                                (vocab.id, *_where_loaded(vocab, spec), vocab.version,
                                 vocab.content_hash, now))
        return len(rows)

    def recall(self, vocab_id: str) -> pd.DataFrame:
        """Every stored decision for one target vocabulary."""
        return pd.read_sql_query("SELECT * FROM decisions WHERE target_vocab=?", self.db,
                                 params=(vocab_id,))

    def vocabularies(self) -> pd.DataFrame:
        """Each target vocabulary with decisions: how many, and where it was loaded from (empty
        when an older codemap wrote the decisions)."""
        return pd.read_sql_query(
            "SELECT d.target_vocab, COUNT(*) AS decisions, COALESCE(v.target_spec, '') AS target_spec,"
            " COALESCE(v.store_dir, '') AS store_dir, COALESCE(v.target_hash, '') AS target_hash"
            " FROM decisions d LEFT JOIN vocabularies v USING (target_vocab)"
            " GROUP BY d.target_vocab ORDER BY d.target_vocab", self.db)


def _where_loaded(vocab: Vocabulary, spec: str) -> tuple[str, str]:
    """(target spec, store folder) that load the same vocabulary again from any folder: a file
    as an absolute path, a store vocabulary by name plus its store folder."""
    if vocab.source.startswith("store:"):
        return spec, str(Path(vocab.source[len("store:"):]).resolve().parent)
    if vocab.source and Path(vocab.source).is_file():
        return str(Path(vocab.source).resolve()), ""
    return spec, ""


def prefill(candidates: pd.DataFrame, vocab: Vocabulary, path: str | Path) -> tuple[pd.DataFrame, int]:
    """Fill the review columns of known sources from the memory; returns (candidates, sources hit).

    A remembered target that is not among the candidates is added as a row of its own (rank
    empty). A remembered approval whose target is gone from, or deprecated in, this vocabulary
    becomes `flagged`, and the `memory` column says why.
    """
    path = Path(path)
    if not path.exists():
        return candidates.assign(**{MEMORY_COLUMN: ""}), 0
    with MappingMemory(path) as memory:
        stored = memory.recall(vocab.id)
    out = candidates.copy()
    for column in REVIEW_FIELDS + [MEMORY_COLUMN]:
        if column not in out.columns:
            out[column] = ""
    if stored.empty:
        return out, 0
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    stale = deprecated_codes(vocab)
    keys = out["source_code"].astype(str) + "\x00" + out["source_text"].map(normalise_text)
    stored_keys = stored["source_code"] + "\x00" + stored["source_key"]
    added, hit = [], set()
    for key, remembered in stored.groupby(stored_keys, sort=False):
        rows = out.index[keys == key]
        if len(rows) == 0:
            continue
        hit.add(key)
        for r in remembered.itertuples(index=False):
            decision, note = r.decision, f"earlier: {r.decision} on {r.decided_at[:10]}"
            if r.target_code not in names:
                decision, note = "flagged", f"earlier target {r.target_code} is no longer in {vocab.id}"
            elif r.target_code in stale:
                decision, note = "flagged", f"earlier target {r.target_code} is deprecated in {vocab.id}"
            values = {"decision": decision, "equivalence": r.equivalence, "reviewer": r.reviewer,
                      "comment": r.comment, MEMORY_COLUMN: note}
            match = rows[out.loc[rows, "target_code"] == r.target_code]
            if len(match):
                for column, value in values.items():
                    out.loc[match, column] = value
            else:
                row = out.loc[rows[0]].copy()
                row[["rank", "score", "matched_name"]] = [pd.NA, float("nan"), ""]
                row["target_code"], row["target_name"] = r.target_code, names.get(r.target_code, r.target_name)
                for column, value in values.items():
                    row[column] = value
                added.append(row)
    if added:
        out = pd.concat([out, pd.DataFrame(added)], ignore_index=True)
        out["rank"] = out["rank"].astype("Int64")
        out = out.sort_values(["source_row", "rank"], kind="stable", na_position="first")
    return out.reset_index(drop=True), len(hit)


def deprecated_codes(vocab: Vocabulary) -> set:
    """Codes the vocabulary itself marks as no longer valid: OMOP invalid_reason (D, U) or LOINC
    STATUS (DEPRECATED, DISCOURAGED)."""
    concepts = vocab.concepts
    stale = pd.Series(False, index=concepts.index)
    if "invalid_reason" in concepts:
        stale |= concepts["invalid_reason"].fillna("").astype(str).str.strip().isin(["D", "U"])
    if "status" in concepts:
        stale |= concepts["status"].fillna("").astype(str).str.upper().isin(["DEPRECATED", "DISCOURAGED"])
    return set(concepts.loc[stale, "code"])
