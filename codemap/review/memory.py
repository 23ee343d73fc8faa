"""The mapping memory: reviewed decisions in one SQLite file, reused by the next `codemap map`.

Keyed on (target vocabulary, site, source code, normalised source text): a source whose code or
text changed is a new source and is reviewed again, and two sites whose lists share local codes
("GLU", "K") keep their own decisions side by side. `apply --memory` stores every decision that is
not `unchecked` (rejections too: the trainer uses them as hard negatives); `map --memory`
pre-fills known sources with the mapped site's earlier decision, says where other sites decided
the same source otherwise, flags targets that left the vocabulary or were deprecated in it, and
(with --local-names) ranks every row with the approved texts as local names of their concepts
(codemap.vocab.local_names). `harmonise --memory` reads every site. `forget` undoes a wrong
decision. A decision an apply replaces with a different one moves to the `history` table (who
decided it, when, on which release), and `memory recheck` (codemap.review.recheck) lists the
stored mappings a new release of their target retired, split or renamed.

One memory serves several processes at once (four sites applying together): SQLite in WAL mode
with a busy timeout, each apply one immediate transaction, so writers queue instead of failing and
a process killed mid-apply leaves the memory as it was before that apply.
"""
from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..errors import CodemapError
from ..read.normalize import source_key
from ..vocab.target import load_target
from ..vocab.local_names import APPROVED_COLUMNS, REJECTED_COLUMNS, LocalNames
from ..vocab.vocabulary import Vocabulary, deprecated_codes

log = logging.getLogger(__name__)

DECISIONS = """
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
    site TEXT NOT NULL DEFAULT '',     -- who decided (apply --site; else the workbook's name)
    target_version TEXT NOT NULL DEFAULT '',  -- the release it was decided on
    PRIMARY KEY (target_vocab, site, source_code, source_key, target_code)
)"""
VOCABULARIES = """
CREATE TABLE IF NOT EXISTS vocabularies (  -- where each target was loaded from, for `train --from-reviews`
    target_vocab TEXT PRIMARY KEY,
    target_spec TEXT NOT NULL,         -- a file path (absolute) or a store/built-in name
    store_dir TEXT NOT NULL,           -- the store folder for store names, else empty
    target_version TEXT NOT NULL,
    target_hash TEXT NOT NULL,
    recorded_at TEXT NOT NULL
)
"""
HISTORY = """
CREATE TABLE IF NOT EXISTS history (  -- decisions a later apply replaced: who, when, which release
    target_vocab TEXT NOT NULL, source_code TEXT NOT NULL, source_key TEXT NOT NULL,
    source_text TEXT NOT NULL, target_code TEXT NOT NULL, target_name TEXT NOT NULL,
    decision TEXT NOT NULL, equivalence TEXT NOT NULL, reviewer TEXT NOT NULL,
    comment TEXT NOT NULL, automatic INTEGER NOT NULL, decided_at TEXT NOT NULL,
    workbook TEXT NOT NULL, site TEXT NOT NULL, target_version TEXT NOT NULL,
    replaced_at TEXT NOT NULL,         -- when the apply that replaced it ran
    replaced_by TEXT NOT NULL          -- that apply's workbook
)"""
# Columns an older codemap's memory lacks, added when it is opened (its rows read as '').
ADDED_COLUMNS = {"site": "TEXT NOT NULL DEFAULT ''", "target_version": "TEXT NOT NULL DEFAULT ''"}
BUSY_SECONDS = 120  # how long a writer waits for another process's apply before giving up
OPEN_RETRY_SECONDS = 0.05  # between tries to open a memory another process holds locked
MEMORY_COLUMN = "memory"
COLUMNS = ["target_vocab", "source_code", "source_key", "source_text", "target_code", "target_name",
           "decision", "equivalence", "reviewer", "comment", "automatic", "decided_at", "workbook",
           "site", "target_version"]
REVIEW_FIELDS = ["decision", "equivalence", "reviewer", "comment"]
# What makes a stored decision the same as a new one (a repeat is not history).
HISTORY_SAME = ["source_code", "source_key", "target_code", "target_name", "decision",
                "equivalence", "reviewer", "comment", "target_version"]
INSERT = (f"INSERT OR REPLACE INTO decisions ({', '.join(COLUMNS)}) "
          f"VALUES ({', '.join('?' * len(COLUMNS))})")


class MappingMemory:
    """An open memory file; use as a context manager so the connection closes."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            try:
                self._open()
                return
            except sqlite3.OperationalError as exc:
                self._close_quietly()
                # Switching a new file to WAL while another process does the same can answer
                # "locked" at once, without SQLite's busy wait: wait and open again
                # (four concurrent applies on one new memory, tests/test_nothing_lost.py).
                if _busy(exc) and time.monotonic() < deadline:
                    time.sleep(OPEN_RETRY_SECONDS)
                    continue
                raise CodemapError(f"{self.path}: the mapping memory cannot be opened ({exc})") from None
            except sqlite3.DatabaseError as exc:
                self._close_quietly()
                raise CodemapError(f"{self.path}: not a codemap mapping memory ({exc})") from None

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Autocommit: every write goes through `_writing`, one immediate transaction each.
        self.db = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        if not _current(self.db):
            with self._writing():
                _create_or_migrate(self.db)

    def _close_quietly(self) -> None:
        if getattr(self, "db", None) is not None:
            self.db.close()
            self.db = None

    @contextlib.contextmanager
    def _writing(self):
        """One transaction that holds SQLite's write lock from its start: concurrent appliers
        wait for each other (busy timeout) rather than fail half-way or overwrite each other."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def __enter__(self) -> "MappingMemory":
        return self

    def __exit__(self, *exc) -> None:
        self.db.close()

    def store(self, reviews: pd.DataFrame, vocab: Vocabulary, source: str, spec: str = "",
              site: str | None = None) -> int:
        """Replace the stored decisions of every reviewed source with the workbook's; returns rows
        stored. Sources left entirely unchecked keep what the memory had. `spec` is the target as
        `apply` loaded it (recorded so the trainer can rank against the same vocabulary); `site`
        who decided (the workbook's name, site_name, when None)."""
        decided = reviews[(reviews["decision"] != "unchecked") & (reviews["target_code"] != "")]
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        site = site or site_name(source)
        rows = [(vocab.id, r.source_code, source_key(r.source_text), r.source_text, r.target_code,
                 r.target_name, r.decision, r.equivalence, r.reviewer, r.comment, int(r.automatic),
                 now, source, site, vocab.version) for r in decided.itertuples(index=False)]
        keys = sorted({(vocab.id, site, row[1], row[2]) for row in rows})
        with self._writing():  # one transaction: a failed write leaves the memory as it was
            # This site's earlier decisions on these sources are replaced (the history keeps
            # those that differ from the new ones); other sites' stay.
            self._archive(keys, rows, now, source)
            self.db.executemany("DELETE FROM decisions WHERE target_vocab=? AND site=? AND "
                                "source_code=? AND source_key=?", keys)
            self.db.executemany(INSERT, rows)
            if spec:
                self.db.execute("INSERT OR REPLACE INTO vocabularies VALUES (?,?,?,?,?,?)",
                                (vocab.id, *_where_loaded(vocab, spec), vocab.version,
                                 vocab.content_hash, now))
        return len(rows)

    def _archive(self, keys: list[tuple], rows: list[tuple], now: str, source: str) -> None:
        """Copy the stored decisions of `keys` that `rows` do not repeat (same target, decision,
        equivalence, reviewer, comment, name and release) into `history`, with when and by
        which workbook they were replaced: re-applying a workbook archives nothing."""
        same = [COLUMNS.index(c) for c in HISTORY_SAME]
        kept = {tuple(row[i] for i in same) for row in rows}
        where = "target_vocab=? AND site=? AND source_code=? AND source_key=?"
        for key in keys:
            for old in self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM decisions WHERE {where}",
                                       key).fetchall():
                if tuple(old[i] for i in same) not in kept:
                    self.db.execute(f"INSERT INTO history VALUES ({', '.join('?' * len(old))}, ?, ?)",
                                    (*old, now, source))

    def history(self, vocab_id: str) -> pd.DataFrame:
        """Every replaced decision of one target vocabulary, oldest replacement first."""
        return pd.read_sql_query("SELECT * FROM history WHERE target_vocab=? ORDER BY replaced_at",
                                 self.db, params=(vocab_id,))

    def recall(self, vocab_id: str) -> pd.DataFrame:
        """Every stored decision for one target vocabulary."""
        return pd.read_sql_query("SELECT * FROM decisions WHERE target_vocab=?", self.db,
                                 params=(vocab_id,))

    def local_names(self, vocab_id: str) -> LocalNames:
        """The approved texts of one target vocabulary as local names of their concepts, and its
        rejected pairs as known negatives (codemap.vocab.local_names). Approvals made by
        `--approve-above` or `--auto-accept` are not a reviewer's and teach nothing."""
        stored = self.recall(vocab_id)
        stored = stored[stored["automatic"] == 0]
        approved = _grouped(stored[stored["decision"] == "approved"])
        rejected = _grouped(stored[stored["decision"] == "rejected"])
        return LocalNames(vocab_id, approved[APPROVED_COLUMNS], rejected[REJECTED_COLUMNS])

    def forget(self, vocab_id: str, text: str | None = None, code: str | None = None,
               site: str | None = None) -> int:
        """Delete the decisions of one target that match every given part (a source text, as
        its key; a target code; a site); returns how many. At least one part must be given."""
        where = {"source_key": None if text is None else source_key(text), "target_code": code,
                 "site": site}
        where = {column: value for column, value in where.items() if value is not None}
        if not where:
            raise CodemapError("name what to forget: a source text, a target code or a site")
        clause = " AND ".join(f"{column}=?" for column in ["target_vocab", *where])
        with self._writing():
            return self.db.execute(f"DELETE FROM decisions WHERE {clause}",
                                   (vocab_id, *where.values())).rowcount

    def vocabularies(self) -> pd.DataFrame:
        """Each target vocabulary with decisions: how many, and where it was loaded from (empty
        when an older codemap wrote the decisions)."""
        return pd.read_sql_query(
            "SELECT d.target_vocab, COUNT(*) AS decisions, COALESCE(v.target_spec, '') AS target_spec,"
            " COALESCE(v.store_dir, '') AS store_dir, COALESCE(v.target_hash, '') AS target_hash"
            " FROM decisions d LEFT JOIN vocabularies v USING (target_vocab)"
            " GROUP BY d.target_vocab ORDER BY d.target_vocab", self.db)


def _busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused because another connection holds the file ("database is locked",
    "database is busy"): worth another try, unlike a missing folder or a read-only file."""
    return "locked" in str(exc) or "busy" in str(exc)


def _current(db: sqlite3.Connection) -> bool:
    """Whether every table exists in this codemap's shape (opening then writes nothing)."""
    keyed = {row[1]: row[5] for row in db.execute("PRAGMA table_info(decisions)")}
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return (keyed.get("site", 0) > 0 and set(COLUMNS) <= set(keyed)
            and {"vocabularies", "history"} <= tables)


def _create_or_migrate(db: sqlite3.Connection) -> None:
    """The tables, made when new; an older memory gets the columns it lacks, and one keyed
    without the site is re-keyed with it, each row keeping the site it was recorded with (read
    from its workbook's name when it has none). Runs inside the opening transaction."""
    db.execute(DECISIONS)
    db.execute(VOCABULARIES)
    db.execute(HISTORY)
    have = {row[1]: row[5] for row in db.execute("PRAGMA table_info(decisions)")}
    for column, kind in ADDED_COLUMNS.items():
        if column not in have:
            db.execute(f"ALTER TABLE decisions ADD COLUMN {column} {kind}")
    if have.get("site", 0) > 0:  # `site` is part of the primary key already
        return
    old = pd.read_sql_query("SELECT * FROM decisions", db)
    old["site"] = site_of(old) if len(old) else old["site"]
    db.execute("ALTER TABLE decisions RENAME TO decisions_unsited")
    db.execute(DECISIONS)
    db.executemany(INSERT, old[COLUMNS].to_dict("split")["data"])
    db.execute("DROP TABLE decisions_unsited")


def site_name(path: str | Path) -> str:
    """A site named by its file: `boston.reviewed.xlsx` → `boston`."""
    return Path(str(path)).name.split(".")[0]


def site_of(stored: pd.DataFrame) -> pd.Series:
    """The site of each stored decision: as `apply --site` named it, else by its workbook (what
    an older codemap stored)."""
    return stored["site"].where(stored["site"] != "", stored["workbook"].map(site_name))


def _grouped(decisions: pd.DataFrame) -> pd.DataFrame:
    """One row per (text key, target code) of stored decisions: the text as last decided, and
    the sites, reviewers and releases behind it as sorted tuples."""
    if decisions.empty:
        return pd.DataFrame(columns=sorted({*APPROVED_COLUMNS, *REJECTED_COLUMNS}))
    decisions = decisions.assign(site=site_of(decisions))
    ordered = decisions.sort_values("decided_at", kind="stable")
    grouped = ordered.groupby(["source_key", "target_code"], sort=True)
    together = lambda column: grouped[column].agg(lambda v: tuple(sorted(set(v) - {""})))
    return pd.DataFrame({
        "name": grouped["source_text"].last(), "sites": together("site"),
        "reviewers": together("reviewer"), "versions": together("target_version"),
        "decided": grouped["decided_at"].last().str[:10]}).reset_index().rename(
        columns={"source_key": "key", "target_code": "code"})


def _where_loaded(vocab: Vocabulary, spec: str) -> tuple[str, str]:
    """(target spec, store folder) that load the same vocabulary again from any folder: a file
    as an absolute path, a store vocabulary by name plus its store folder."""
    if vocab.source.startswith("store:"):
        return spec, str(Path(vocab.source[len("store:"):]).resolve().parent)
    if vocab.source and Path(vocab.source).is_file():
        return str(Path(vocab.source).resolve()), ""
    return spec, ""


def prefill(candidates: pd.DataFrame, vocab: Vocabulary, path: str | Path,
            site: str | None, source: str | Path) -> tuple[pd.DataFrame, int]:
    """Fill the review columns of known sources from one site's decisions in the memory (`site`,
    else the only site it has, else the one the list `source` is named for: memory_site);
    returns (candidates, sources hit: this site's or another's).

    A remembered target that is not among the candidates is added as a row of its own (rank
    empty). A remembered approval whose target is gone from, or deprecated in, this vocabulary
    becomes `flagged`, and the `memory` column says why. Other sites' decisions on the same
    source fill nothing: the `memory` column says what they decided where it is not what this
    site decided ("york: approved"), so a reviewer sees a conflict before harmonise does.
    """
    out = candidates.copy()
    for column in REVIEW_FIELDS + [MEMORY_COLUMN]:
        if column not in out.columns:
            out[column] = ""
    if not Path(path).exists():
        return out, 0
    site, stored = site_decisions(path, vocab.id, site, source)
    if stored.empty:
        return out, 0
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    stale = deprecated_codes(vocab)
    keys = out["source_code"].astype(str) + "\x00" + out["source_text"].map(source_key)
    stored_keys = stored["source_code"] + "\x00" + stored["source_key"]
    added, hit = [], set()
    for key, remembered in stored.groupby(stored_keys, sort=False):
        rows = out.index[keys == key]
        if len(rows) == 0:
            continue
        hit.add(key)
        own = remembered[remembered["site"] == site]
        for r in own.itertuples(index=False):
            values = {"decision": r.decision, "equivalence": r.equivalence,
                      "reviewer": r.reviewer, "comment": r.comment,
                      MEMORY_COLUMN: f"earlier: {r.decision} on {r.decided_at[:10]}"}
            if r.target_code not in names:
                values.update(decision="flagged", **{
                    MEMORY_COLUMN: f"earlier target {r.target_code} is no longer in {vocab.id}"})
            elif r.target_code in stale:
                values.update(decision="flagged", **{
                    MEMORY_COLUMN: f"earlier target {r.target_code} is deprecated in {vocab.id}"})
            added += _fill(out, rows, r.target_code, names.get(r.target_code, r.target_name),
                           values)
        said_here = dict(zip(own["target_code"], own["decision"]))
        for code, elsewhere in remembered[remembered["site"] != site].groupby("target_code"):
            differing = elsewhere[elsewhere["decision"] != said_here.get(code, "")]
            if len(differing) and (code in said_here or (differing["decision"] == "approved").any()):
                note = "; ".join(f"{s}: {d}" for s, d in
                                 sorted(zip(differing["site"], differing["decision"])))
                added += _fill(out, rows, code, names.get(code, differing["target_name"].iloc[0]),
                               {MEMORY_COLUMN: note}, append=True)
    if added:
        out = pd.concat([out, pd.DataFrame(added)], ignore_index=True)
        out["rank"] = out["rank"].astype("Int64")
        out = out.sort_values(["source_row", "rank"], kind="stable", na_position="first")
    return out.reset_index(drop=True), len(hit)


_WARNED: set[str] = set()


def site_decisions(path: str | Path, vocab_id: str, site: str | None,
                   source: str | Path) -> tuple[str | None, pd.DataFrame]:
    """(the site whose decisions serve the list `source` — memory_site —, every stored decision
    on one target with its `site`): what pre-filling and a site's conventions read."""
    with MappingMemory(path) as memory:
        stored = memory.recall(vocab_id)
    if stored.empty:
        return None, stored
    stored = stored.assign(site=site_of(stored))
    return memory_site(sorted(set(stored["site"])), site, source, path), stored


def site_approvals(path: str | Path, vocab_id: str, site: str | None,
                   source: str | Path) -> tuple[str | None, list[tuple[str, str]]]:
    """(the site whose decisions serve a list — memory_site —, the (source text, target code)
    pairs its reviewers approved onto one target): what a site's conventions are learned from
    (codemap.domains: `conventions`). Approvals made by `--approve-above` or `--auto-accept` are
    not a reviewer's and teach nothing."""
    site, stored = site_decisions(path, vocab_id, site, source)
    if stored.empty:
        return None, []
    mine = stored[(stored["site"] == site) & (stored["decision"] == "approved")
                  & (stored["automatic"] == 0)]
    return site, list(zip(mine["source_text"], mine["target_code"]))


def memory_site(sites: list[str], asked: str | None, source: str | Path, path) -> str | None:
    """Whose decisions pre-fill a list: the site asked for; else the memory's only site (one
    team's memory, whatever its lists are called); else the site the list's file is named for
    (`apply` names a site by its workbook the same way); else none, said once per run."""
    if asked:
        return asked
    if len(sites) == 1:
        return sites[0]
    named = site_name(source)
    if named in sites:
        return named
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        log.warning("%s holds decisions of %d sites (%s) and none is named %r: pass --site to "
                    "pre-fill one site's decisions; the others are noted in the memory column",
                    path, len(sites), ", ".join(sites[:5]) + (", …" if len(sites) > 5 else ""),
                    named)
    return None


def _fill(out: pd.DataFrame, rows: pd.Index, code: str, name: str, values: dict,
          append: bool = False) -> list[pd.Series]:
    """Set `values` on the source's candidate row for `code` (`append`: the memory note added
    to what it says); returns the new row to add when `code` is not among its candidates."""
    match = rows[out.loc[rows, "target_code"] == code]
    if len(match):
        for column, value in values.items():
            if append and column == MEMORY_COLUMN:
                said = out.loc[match, column]
                value = said.where(said == "", said + "; ") + value
            out.loc[match, column] = value
        return []
    row = out.loc[rows[0]].copy()
    row[["rank", "score", "matched_name"]] = [pd.NA, float("nan"), ""]
    row[REVIEW_FIELDS + [MEMORY_COLUMN]] = ""  # not the copied row's decision
    row["target_code"], row["target_name"] = code, name
    for column, value in values.items():
        row[column] = value
    return [row]


def stored_target(memory: MappingMemory, target: str | None) -> str:
    """The target vocabulary id the memory's decisions are for: `target` when given (it must
    have decisions), else the only one there is."""
    known = memory.vocabularies()["target_vocab"].tolist()
    if not known:
        raise CodemapError(f"{memory.path}: the mapping memory holds no decisions")
    if target is None:
        if len(known) > 1:
            raise CodemapError(f"{memory.path}: decisions for {', '.join(known)}; choose one with "
                               f"--target")
        return known[0]
    if target not in known:
        raise CodemapError(f"{memory.path}: no decisions for target {target!r} (it has "
                           f"{', '.join(known)})")
    return target


def local_name_table(path: str | Path, target: str | None = None) -> tuple[str, pd.DataFrame]:
    """(target id, one row per approved local name and per rejected pair): what `map --memory`
    ranks with, each with its sites, reviewers and release, and whether the target as recorded
    still has its concept (`status`: used, or why not)."""
    if not Path(path).exists():
        raise CodemapError(f"{path}: no such mapping memory")
    with MappingMemory(path) as memory:
        target = stored_target(memory, target)
        names = memory.local_names(target)
        where = memory.vocabularies().set_index("target_vocab").loc[target]
    status = pd.Series("used", index=names.approved.index)
    try:  # the target as recorded, to flag the names whose concept it no longer has
        vocab = load_target(where["target_spec"] or target, store_dir=where["store_dir"] or None)
        _, flagged = names.usable(vocab)
        status[names.approved["key"].isin(flagged["key"]) &
               names.approved["code"].isin(flagged["code"])] = "not used: concept deprecated or gone"
    except CodemapError:
        status[:] = "used (target not loadable here to check)"
    join = lambda values: ", ".join(values)
    approved = names.approved.assign(decision="approved", status=status)
    rejected = names.rejected.assign(decision="rejected", status="ranked last for this text",
                                     reviewers=[()] * len(names.rejected),
                                     versions=[()] * len(names.rejected), decided="")
    table = pd.concat([approved, rejected], ignore_index=True)
    for column in ("sites", "reviewers", "versions"):
        table[column] = table[column].map(join)
    return target, table[["decision", "name", "code", "sites", "reviewers", "versions", "decided",
                          "status"]]
