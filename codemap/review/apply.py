"""Apply a reviewed workbook: read decisions, validate them, auto-approve, and hand the approved
mappings to `writers.write_mappings` (OMOP source_to_concept_map, SSSOM, Usagi, plain CSV).

The workbook is the one `codemap map` wrote, after a person edited it: decisions, equivalence,
reviewer and comments filled in, maybe a candidate below rank 1 approved, a code typed over a
proposed one, or a row added at the bottom with a code nobody proposed. Every problem is reported
with its spreadsheet row (the header is row 1) before anything is written.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..config import ApplyConfig
from ..decide.triage import AUTO_ACCEPT_BY
from ..errors import CodemapError
from ..files import atomic_path
from ..read.readers import read_sheets
from ..vocab.target import load_target
from ..vocab.vocabulary import Vocabulary
from ..write.writers import DECISIONS, EQUIVALENCES, write_mappings
from .memory import MappingMemory

log = logging.getLogger(__name__)

CANDIDATE_SHEET = "candidates"
RUN_SHEET = "run"
# Spellings from the first workbook version and from Usagi exports, read as today's states.
_DECISION_ALIASES = {"approve": "approved", "reject": "rejected", "flag": "flagged",
                     "ignore": "ignored", "": "unchecked", "auto_mapped": "unchecked",
                     "auto_mapped_to_1": "unchecked"}
_REQUIRED = ["source_code", "target_code", "decision"]
AUTOMATIC_BY = "codemap --approve-above"
MEMORY_SITE = "memory_site"  # run sheet setting: whose decisions a workbook holds (memory recheck)
MAX_LISTED = 5


@dataclass
class ApplyResult:
    """What `apply` did: the approved mappings written, every row's resolved state, the counts."""

    mappings: pd.DataFrame  # approved rows, one per (source, target), with target attributes
    reviews: pd.DataFrame  # every workbook row with normalised decision and flags
    vocab: Vocabulary
    run: dict
    counts: dict = field(default_factory=dict)


def read_reviewed_workbook(path: Path) -> tuple[pd.DataFrame, dict]:
    """The candidates sheet (strings, as typed) and the run sheet as a dict.

    Raises CodemapError when the file is not a codemap review workbook.
    """
    sheets = read_sheets(path, [CANDIDATE_SHEET, RUN_SHEET])
    frame = sheets[CANDIDATE_SHEET]
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise CodemapError(f"{path}: sheet {CANDIDATE_SHEET!r} has no column {missing[0]!r}; is this a "
                           f"workbook written by `codemap map`?")
    run_sheet = sheets.get(RUN_SHEET)
    run = ({} if run_sheet is None or not {"setting", "value"} <= set(run_sheet.columns)
           else dict(zip(run_sheet["setting"], run_sheet["value"])))
    frame = frame.copy()
    for column in ("decision", "equivalence", "reviewer", "comment", "source_row", "source_text",
                   "target_name", "score", "rank"):
        if column not in frame.columns:
            frame[column] = ""
        frame[column] = frame[column].astype(str).str.strip()
    frame["source_code"] = frame["source_code"].astype(str).str.strip()
    frame["target_code"] = frame["target_code"].astype(str).str.strip()
    frame["sheet_row"] = range(2, len(frame) + 2)
    return frame, run


def target_from_run(run: dict, workbook: Path, override: str | None) -> Vocabulary:
    """The target vocabulary: --target, else the one the run sheet recorded.

    A vocabulary file recorded with a relative path is looked up from the current folder, then
    beside the workbook. Raises CodemapError when neither names a loadable vocabulary.
    """
    spec = override or run.get("target_spec") or run.get("target")
    if not spec:
        raise CodemapError(f"{workbook}: the run sheet names no target vocabulary; use --target")
    candidates = [spec]
    if not Path(spec).is_absolute():
        candidates.append(str(workbook.parent / spec))
    store = run.get("store_dir")  # a re-check records the store it read the release from
    store = store.strip() or None if isinstance(store, str) else None
    for candidate in candidates:
        if Path(candidate).suffix and not Path(candidate).exists():
            continue
        try:
            return load_target(candidate, store_dir=store)
        except CodemapError:
            if override:
                raise
    raise CodemapError(f"{workbook}: target {spec!r} from the run sheet cannot be loaded; "
                       f"name it with --target")


def resolve_reviews(frame: pd.DataFrame, vocab: Vocabulary, approve_above: float | None,
                    allow_multiple: bool = False) -> tuple[pd.DataFrame, list[str]]:
    """Normalise decisions and equivalence, fill rows a reviewer added, check every row.

    Returns (reviews, problems); each problem starts with "row N:". Adds columns `automatic`
    (approved by --approve-above, not by a person) and `proposed` (the code is the candidate
    codemap proposed on that row, not one typed by the reviewer).
    """
    reviews = frame.copy()
    problems: list[str] = []
    reviews["decision"] = reviews["decision"].str.lower().map(lambda d: _DECISION_ALIASES.get(d, d))
    reviews["equivalence"] = reviews["equivalence"].str.lower()
    for row, decision, equivalence in zip(reviews["sheet_row"], reviews["decision"],
                                          reviews["equivalence"]):
        if decision not in DECISIONS:
            problems.append(f"row {row}: unknown decision {decision!r} (use one of "
                            f"{', '.join(DECISIONS)})")
        if equivalence and equivalence not in EQUIVALENCES:
            problems.append(f"row {row}: unknown equivalence {equivalence!r} (use one of "
                            f"{', '.join(EQUIVALENCES)})")
    _fill_added_rows(reviews)
    _mark_proposed(reviews, vocab)
    # An approval `--approve-above` made in an earlier round comes back through the memory with
    # its reviewer mark, and `map --auto-accept` pre-approves with one; either stays automatic
    # until a person puts their own name there.
    reviews["automatic"] = ((reviews["decision"] == "approved")
                            & reviews["reviewer"].str.startswith((AUTOMATIC_BY, AUTO_ACCEPT_BY)))
    if approve_above is not None:
        _approve_above(reviews, approve_above)
    approved = reviews[reviews["decision"] == "approved"]
    known = set(vocab.concepts["code"])
    for row, code in zip(approved["sheet_row"], approved["target_code"]):
        if not code:
            problems.append(f"row {row}: approved but target_code is empty")
        elif code not in known:
            problems.append(f"row {row}: target_code {code!r} is not in {vocab.id} "
                            f"({vocab.version})")
    if not allow_multiple:
        for key, group in approved.groupby("source_key", sort=False):
            if group["target_code"].nunique() > 1:
                rows = ", ".join(str(r) for r in group["sheet_row"])
                problems.append(f"row {group['sheet_row'].iloc[0]}: source {group['source_code'].iloc[0]!r} "
                                f"has {group['target_code'].nunique()} approved targets (rows {rows}); "
                                f"approve one, or pass --allow-multiple")
    return reviews, problems


def _fill_added_rows(reviews: pd.DataFrame) -> None:
    """A row the reviewer added may carry only source_code: take the rest from its siblings."""
    reviews["source_key"] = reviews["source_row"].where(reviews["source_row"] != "",
                                                        "code:" + reviews["source_code"])
    firsts = reviews[reviews["source_row"] != ""].drop_duplicates("source_code")
    by_code = firsts.set_index("source_code")
    added = reviews.index[reviews["source_row"] == ""]
    for i in added:
        code = reviews.at[i, "source_code"]
        if code in by_code.index:
            reviews.at[i, "source_key"] = by_code.at[code, "source_row"]
            reviews.at[i, "source_row"] = by_code.at[code, "source_row"]
            if not reviews.at[i, "source_text"]:
                reviews.at[i, "source_text"] = by_code.at[code, "source_text"]


def _mark_proposed(reviews: pd.DataFrame, vocab: Vocabulary) -> None:
    """A code is codemap's proposal when the row still shows that concept's name and a score;
    otherwise the reviewer typed it: its name comes from the vocabulary and it has no score,
    confidence or other model figure (those were the replaced candidate's)."""
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    vocab_name = reviews["target_code"].map(names).fillna("")
    proposed = (reviews["score"] != "") & (vocab_name == reviews["target_name"])
    reviews["proposed"] = proposed
    typed = ~proposed & (reviews["target_code"] != "")
    # A code the vocabulary does not have (a flagged target a newer release dropped) keeps the
    # name it was shown with; approving one is refused in resolve_reviews.
    reviews.loc[typed & (vocab_name != ""), "target_name"] = vocab_name[typed & (vocab_name != "")]
    for column in ("score", "confidence", "encoder_score", "lexical_score"):
        if column in reviews:
            reviews.loc[typed, column] = ""


def _approve_above(reviews: pd.DataFrame, threshold: float) -> None:
    """Approve rank 1 of every source nobody reviewed whose score is at least `threshold`."""
    score = pd.to_numeric(reviews["score"], errors="coerce")
    untouched = reviews.groupby("source_key")["decision"].transform(lambda d: (d == "unchecked").all())
    pick = untouched & (reviews["rank"] == "1") & reviews["proposed"] & (score >= threshold)
    reviews.loc[pick, "decision"] = "approved"
    reviews.loc[pick, "automatic"] = True
    reviews.loc[pick, "reviewer"] = f"{AUTOMATIC_BY} {threshold:g}"


def approved_mappings(reviews: pd.DataFrame, vocab: Vocabulary) -> pd.DataFrame:
    """Approved rows, one per (source, target), joined with the target's attributes."""
    approved = reviews[reviews["decision"] == "approved"].drop_duplicates(["source_key", "target_code"])
    attributes = vocab.concept_attributes().drop(columns=["name"], errors="ignore")
    keep = [c for c in ("concept_id", "vocabulary_id", "domain_id", "invalid_reason") if c in attributes]
    out = approved.join(attributes[keep], on="target_code")
    out["score"] = pd.to_numeric(out["score"], errors="coerce")
    if "confidence" in out:
        out["confidence"] = pd.to_numeric(out["confidence"], errors="coerce")
    return out.reset_index(drop=True)


def apply_reviews(config: ApplyConfig) -> ApplyResult:
    """Read, validate and write a reviewed workbook; store decisions in the memory when asked.

    Raises CodemapError listing the first problems with their rows; all of them go to
    OUTPUT.rejects.csv beside the output.
    """
    frame, run = read_reviewed_workbook(config.workbook)
    vocab = target_from_run(run, config.workbook, config.target)
    reviews, problems = resolve_reviews(frame, vocab, config.approve_above, config.allow_multiple)
    if problems:
        rejects = write_rejects(problems, config.output)
        shown = "; ".join(problems[:MAX_LISTED])
        more = f" (+{len(problems) - MAX_LISTED} more)" if len(problems) > MAX_LISTED else ""
        raise CodemapError(f"{config.workbook}: {len(problems)} problem(s), nothing written: "
                           f"{shown}{more}; all listed in {rejects}")
    mappings = approved_mappings(reviews, vocab)
    write_mappings(mappings, reviews, config, vocab, run)
    if config.memory is not None:
        with MappingMemory(config.memory) as memory:
            # A re-check workbook names the site whose decisions it holds (memory recheck).
            memory.store(reviews, vocab, source=str(config.workbook),
                         spec=config.target or run.get("target_spec") or vocab.id,
                         site=config.site or run.get(MEMORY_SITE) or None)
    counts = {"rows": len(reviews), "sources": reviews["source_key"].nunique(),
              "approved": len(mappings), "automatic": int(mappings["automatic"].sum()),
              "typed": int((~mappings["proposed"]).sum()),
              "below_rank_1": int((mappings["rank"].isin(["", "1"]) == False).sum())}  # noqa: E712
    return ApplyResult(mappings, reviews, vocab, run, counts)


def write_rejects(problems: list[str], output: Path) -> Path:
    """All problems, one per line, beside the output: OUTPUT.rejects.csv."""
    path = output.with_name(f"{output.stem}.rejects.csv")
    rows = [p.split(": ", 1) for p in problems]
    with atomic_path(path) as tmp:
        pd.DataFrame(rows, columns=["row", "problem"]).to_csv(tmp, index=False)
    return path
