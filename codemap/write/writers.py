"""Write candidates: the xlsx review workbook, or CSV/TSV/Parquet for pipelines. Always atomically.

A long list is mapped block by block: each finished block is kept as a Parquet part beside the
output (parts.PartsFolder), and write_candidate_parts streams the parts into the output, so neither the
mapping nor the writing holds the whole list (except the review workbook, at most 1,048,576 rows).

Spreadsheet safety: a cell whose text starts with = + - @ (or a tab or carriage return) would run
as a formula when a spreadsheet opens the file. The workbook writes every text cell as a string;
CSV/TSV text cells get a leading apostrophe (the OWASP recommendation), numbers are left alone.
Parquet keeps values as they are: it is read by data tools, not opened as a spreadsheet.
"""
from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..decide.triage import review_order
from ..errors import CodemapError
from ..files import atomic_path, remove_stale_temps
from ..read.bounds import name_list
from ..read.readers import SOURCE_FILE_COLUMN
from .parts import PartsFolder, read_manifest, read_parts

# Review states as Usagi names them; equivalence of the target to the source, as in Usagi/FHIR.
DECISIONS = ["approved", "flagged", "rejected", "ignored", "unchecked"]
EQUIVALENCES = ["equal", "wider", "narrower", "inexact"]
REVIEW_COLUMNS = ["decision", "equivalence", "reviewer", "comment"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
OUTPUT_SUFFIXES = {".xlsx", ".csv", ".tsv", ".parquet"}
# What each column of the candidates sheet means: the workbook's `legend` sheet and the notes on
# its header cells. A reviewer sees `score` 1.2 beside `confidence` 0.38; this says which to trust.
COLUMN_LEGEND = {
    "source_file": "The code list the row comes from (several lists mapped together).",
    "source_row": "The row of the code list (its header is row 1), so a row can be found again.",
    "source_code": "The code as in the code list; 'rowN' where the list has no code column.",
    "source_text": "The text that was mapped (the text columns joined).",
    "flag": "A problem with the source row itself, e.g. an empty text: it got no candidates.",
    "rank": "1 = the best candidate for the source row; rows ranked 2+ are grouped under it "
            "(click + on the left to unfold).",
    "target_code": "The code of the candidate concept in the target vocabulary.",
    "target_name": "The candidate concept's preferred name.",
    "matched_name": "The name or synonym of the concept that matched best (why it was found).",
    "score": "Ranking score: orders the candidates of one row. It has no fixed scale (evidence "
             "can push it above 1 or below 0) and is not a probability: compare it only within "
             "a row. To judge whether a candidate is right, trust `confidence`.",
    "confidence": "Calibrated probability (0-1) that this candidate is the right mapping, fitted "
                  "on reviewed gold pairs (see the run sheet). The number to trust; empty when "
                  "no calibration fits the model and target.",
    "encoder_score": "Cosine similarity of the embeddings of the source text and the matched "
                     "name (-1 to 1): one input of `score`.",
    "lexical_score": "Character n-gram (TF-IDF) similarity of the source text and the matched "
                     "name (0 to 1): the other input of `score`.",
    "explanation": "What moved the candidate up or down: unit, specimen, strength, form and "
                   "other evidence compared with the source row; 'broader: …' marks a broader "
                   "(is-a) concept proposed when nothing equivalent is likely.",
    "suggestion": "What codemap suggests for the source: review, no_match (nothing likely "
                  "right) or pre-approve (confidence at the --auto-accept precision).",
    "llm": "The local LLM's answer on the candidate when asked to pick among the top ones of "
           "an uncertain row (--llm-url; the exchange is logged beside the output).",
    "memory": "A decision made on this source before, filled in from the mapping memory "
              "(--memory).",
    "decision": f"Your decision: {', '.join(DECISIONS)}. `codemap apply` writes the approved "
                f"rows.",
    "equivalence": f"How the source relates to the approved concept: {', '.join(EQUIVALENCES)}.",
    "reviewer": "Who reviewed the row.",
    "comment": "Free text for the reviewer.",
}
OTHER_COLUMN = "A column of the code list, as read (shown to help the review)."
EXCEL_MAX_ROWS = 1_048_576


def default_output(source: Path) -> Path:
    """`labs.xlsx` → `labs.codemap.xlsx`, beside the input."""
    return source.with_name(f"{source.stem}.codemap.xlsx")


def check_output(path: str | Path) -> Path:
    """The output path, if its suffix is one codemap writes; CodemapError otherwise."""
    path = Path(path)
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise CodemapError(f"{path}: unknown output type {path.suffix or '(none)'}; use .xlsx, "
                           f".csv, .tsv or .parquet")
    return path


def write_candidates(frame: pd.DataFrame, path: str | Path, run: dict) -> Path:
    """Write candidates to .xlsx (review workbook), .csv, .tsv or .parquet, chosen by the suffix.

    Raises CodemapError for an unknown suffix or more rows than one sheet holds.
    """
    return _write_frames(iter([frame]), check_output(path), run)


def write_candidate_parts(parts: PartsFolder, path: str | Path, run: dict) -> Path:
    """Write a streamed run's finished blocks, in order, to one output file (atomically).

    CSV/TSV/Parquet are written part by part; the review workbook is built from all parts at once.
    Temporary files that a killed earlier write of `path` left behind are removed first.
    """
    return _write_frames(parts.frames(), check_output(path), run)


def write_review_parts(folder: Path, output: Path, *, site: str | None = None,
                       rows: int | None = None) -> list[Path]:
    """Review workbooks from a parts folder with the normal writer: one workbook, one per value of
    the `site` column (`labs.xlsx` → `labs-<value>.xlsx`), or one per `rows` source rows.

    Raises CodemapError for both `site` and `rows`, an unknown site column or a workbook that
    would not fit one sheet.
    """
    if site is not None and rows is not None:
        raise CodemapError("give --site or --rows, not both")
    frame = read_parts(folder)
    run = {**read_manifest(folder).get("run", {}), "parts_folder": str(folder)}
    output = Path(output)
    if site is not None:
        if site not in frame.columns:
            raise CodemapError(f"{folder}: no column named {site!r} in the parts "
                               f"(columns: {name_list(frame.columns)})")
        groups = [(str(value), group) for value, group in frame.groupby(site, sort=True)]
    elif rows is not None:
        # Split between source rows, never inside one row's candidates.
        keys = frame[SOURCE_FILE_COLUMN].astype(str) + "\x00" + frame["source_row"].astype(str)
        number = (keys != keys.shift()).cumsum() - 1
        groups = [(f"{n + 1:03d}", group) for n, group in frame.groupby(number // rows, sort=True)]
    else:
        return [write_candidates(frame, output, run)]
    written = []
    for label, group in groups:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", label) or "blank"
        written.append(write_candidates(group.reset_index(drop=True),
                                        output.with_name(f"{output.stem}-{safe}{output.suffix}"),
                                        {**run, "part_of_review": label}))
    return written


def _write_frames(frames: Iterator[pd.DataFrame], path: Path, run: dict) -> Path:
    suffix = path.suffix.lower()
    remove_stale_temps(path)
    with atomic_path(path) as tmp:
        if suffix == ".xlsx":  # holds every row anyway: opens sorted by need of review
            write_review_workbook(review_order(pd.concat(list(frames), ignore_index=True)), tmp, run)
        elif suffix == ".parquet":
            _write_parquet(frames, tmp)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as handle:
                for number, frame in enumerate(frames):
                    escaped = frame.apply(lambda col: col.map(escape_formula)
                                          if pd.api.types.is_string_dtype(col) else col)
                    escaped.to_csv(handle, sep="\t" if suffix == ".tsv" else ",", index=False,
                                   header=number == 0)
    return path


def _write_parquet(frames: Iterator[pd.DataFrame], path: Path) -> None:
    """One row group per frame, with the first frame's schema. A column that is empty (all None)
    in the first frame is typed as text: empty cells are text columns with nothing in them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    try:
        for frame in frames:
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                schema = pa.schema([f.with_type(pa.string()) if pa.types.is_null(f.type) else f
                                    for f in table.schema], metadata=table.schema.metadata)
                writer = pq.ParquetWriter(path, schema)
            writer.write_table(table.select(writer.schema.names).cast(writer.schema))
    finally:
        if writer is not None:
            writer.close()


def escape_formula(value):
    """Prefix text that a spreadsheet would run as a formula with an apostrophe."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_review_workbook(frame: pd.DataFrame, path: Path, run: dict) -> None:
    """The review workbook: one sheet of candidates grouped by source row, one of run metadata,
    one (`legend`) saying what each column means (also a note on each header cell).

    Candidates rank 2+ are outline level 1 (collapsible to the top candidate per source), score
    cells are shaded red→green, `decision` has a drop-down, header frozen with an autofilter.
    """
    import xlsxwriter  # imported here: CSV-only runs do not need it

    if len(frame) + 1 > EXCEL_MAX_ROWS:
        raise CodemapError(f"{path.name}: {len(frame):,} rows do not fit one sheet "
                           f"({EXCEL_MAX_ROWS:,} max); write .csv or .tsv instead")
    table = frame.copy()
    for column in REVIEW_COLUMNS:
        if column not in table.columns:
            table[column] = ""
    book = xlsxwriter.Workbook(str(path), {"strings_to_formulas": False, "strings_to_urls": False,
                                           "nan_inf_to_errors": True})
    header = book.add_format({"bold": True, "bg_color": "#DDE4EE", "border": 1, "text_wrap": True})
    band = [book.add_format({}), book.add_format({"bg_color": "#F3F6FA"})]
    score_fmt = [book.add_format({"num_format": "0.000"}),
                 book.add_format({"num_format": "0.000", "bg_color": "#F3F6FA"})]
    sheet = book.add_worksheet("candidates")
    columns = list(table.columns)
    for c, name in enumerate(columns):
        sheet.write_string(0, c, name, header)
    source_rows = table["source_row"].to_numpy()
    ranks = table["rank"].to_numpy() if "rank" in table else [None] * len(table)
    group = 0
    for r, values in enumerate(table.itertuples(index=False), start=1):
        if r > 1 and source_rows[r - 1] != source_rows[r - 2]:
            group ^= 1
        for c, value in enumerate(values):
            write_cell(sheet, r, c, value, score_fmt[group] if columns[c] in ("score", "confidence") else band[group])
        rank = ranks[r - 1]
        if rank is not None and not pd.isna(rank) and int(rank) > 1:
            sheet.set_row(r, None, None, {"level": 1})
    last = len(table)
    sheet.freeze_panes(1, 0)
    sheet.autofilter(0, 0, last, len(columns) - 1)
    widths = {"source_text": 36, "target_name": 48, "matched_name": 40, "comment": 30, "flag": 18,
              "explanation": 60}
    for c, name in enumerate(columns):
        sheet.set_column(c, c, widths.get(name, max(10, min(len(name) + 2, 18))))
    if last:
        if "score" in columns:
            col = columns.index("score")
            sheet.conditional_format(1, col, last, col, {
                "type": "3_color_scale", "min_type": "num", "min_value": 0.3, "min_color": "#F8696B",
                "mid_type": "num", "mid_value": 0.6, "mid_color": "#FFEB84",
                "max_type": "num", "max_value": 0.9, "max_color": "#63BE7B"})
        if "confidence" in columns:  # a probability: red below 0.2, green from 0.8
            col = columns.index("confidence")
            sheet.conditional_format(1, col, last, col, {
                "type": "3_color_scale", "min_type": "num", "min_value": 0.2, "min_color": "#F8696B",
                "mid_type": "num", "mid_value": 0.5, "mid_color": "#FFEB84",
                "max_type": "num", "max_value": 0.8, "max_color": "#63BE7B"})
        for name, choices in (("decision", DECISIONS), ("equivalence", EQUIVALENCES)):
            col = columns.index(name)
            sheet.data_validation(1, col, last, col, {
                "validate": "list", "source": choices, "error_title": name,
                "error_message": f"choose one of: {', '.join(choices)}"})
    for c, name in enumerate(columns):  # a note on each header cell: hover to read it
        sheet.write_comment(0, c, f"{name}: {COLUMN_LEGEND.get(name, OTHER_COLUMN)}",
                            {"x_scale": 2.5, "y_scale": 1.6})
    write_run_sheet(book, run, header)
    _write_legend_sheet(book, columns, header)
    book.close()


def _write_legend_sheet(book, columns: list[str], header) -> None:
    """`legend`: each column of the candidates sheet, in order, and what it means."""
    sheet = book.add_worksheet("legend")
    sheet.write_string(0, 0, "column", header)
    sheet.write_string(0, 1, "meaning", header)
    wrap = book.add_format({"text_wrap": True, "valign": "top"})
    for r, name in enumerate(columns, start=1):
        sheet.write_string(r, 0, name, wrap)
        sheet.write_string(r, 1, COLUMN_LEGEND.get(name, OTHER_COLUMN), wrap)
    sheet.set_column(0, 0, 18)
    sheet.set_column(1, 1, 110)


def write_cell(sheet, r: int, c: int, value, fmt) -> None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        sheet.write_blank(r, c, None, fmt)
    elif isinstance(value, bool):
        sheet.write_boolean(r, c, value, fmt)
    elif isinstance(value, numbers.Integral):
        sheet.write_number(r, c, int(value), fmt)
    elif isinstance(value, numbers.Real):
        sheet.write_number(r, c, float(value), fmt)
    else:
        sheet.write_string(r, c, str(value), fmt)


def write_run_sheet(book, run: dict, header) -> None:
    sheet = book.add_worksheet("run")
    sheet.write_string(0, 0, "setting", header)
    sheet.write_string(0, 1, "value", header)
    for r, (key, value) in enumerate(run.items(), start=1):
        sheet.write_string(r, 0, str(key))
        sheet.write_string(r, 1, str(value))
    sheet.set_column(0, 0, 22)
    sheet.set_column(1, 1, 100)


# --- approved mappings in exchange formats (`codemap apply`) ------------------------------------

# OMOP CDM v5.4 SOURCE_TO_CONCEPT_MAP, in the CDM's column order.
OMOP_STCM_COLUMNS = ["source_code", "source_concept_id", "source_vocabulary_id",
                     "source_code_description", "target_concept_id", "target_vocabulary_id",
                     "valid_start_date", "valid_end_date", "invalid_reason"]
# Usagi's save/import format (WriteCodeMappingsToFile + SourceCode.toRow in OHDSI/Usagi).
USAGI_COLUMNS = ["sourceCode", "sourceName", "sourceFrequency", "sourceAutoAssignedConceptIds",
                 "matchScore", "mappingStatus", "equivalence", "statusSetBy", "statusSetOn",
                 "conceptId", "conceptName", "domainId", "mappingType", "comment", "createdBy",
                 "createdOn", "assignedReviewer"]
SSSOM_COLUMNS = ["subject_id", "subject_label", "predicate_id", "object_id", "object_label",
                 "mapping_justification", "confidence", "author_id", "author_label",
                 "mapping_date", "comment"]
CSV_MAPPING_COLUMNS = ["source_row", "source_code", "source_text", "target_code", "target_name",
                       "score", "rank", "equivalence", "reviewer", "comment", "automatic",
                       "proposed", "confidence"]
NO_TERM_FOUND = "sssom:NoTermFound"  # SSSOM's object for a subject with no match in the target
SSSOM_PREDICATES = {"equal": "skos:exactMatch", "wider": "skos:broadMatch",
                    "narrower": "skos:narrowMatch", "inexact": "skos:closeMatch", "": "skos:closeMatch"}
USAGI_EQUIVALENCE = {"equal": "EQUAL", "wider": "WIDER", "narrower": "NARROWER",
                     "inexact": "INEXACT", "": "UNREVIEWED"}
# Prefix expansions for the targets codemap knows; others get a urn: expansion.
KNOWN_PREFIXES = {"LOINC": "https://loinc.org/", "SNOMED": "http://snomed.info/id/",
                  "RxNorm": "http://purl.bioontology.org/ontology/RXNORM/",
                  "ICD10CM": "http://hl7.org/fhir/sid/icd-10-cm/", "ATC": "http://www.whocc.no/atc/"}
OMOP_END_DATE = "2099-12-31"


def write_mappings(mappings: pd.DataFrame, reviews: pd.DataFrame, config, vocab, run: dict) -> Path:
    """Write approved mappings in `config.format` (a name of MAPPING_FORMATS) to
    `config.output`, atomically.

    `mappings` are approved rows (review.approved_mappings); `reviews` every row, for the
    formats that also list what was not approved. Raises CodemapError for an unknown format, and
    when the format needs OMOP concept ids the target does not have.
    """
    fmt = MAPPING_FORMATS.get(config.format)
    if fmt is None:
        raise CodemapError(f"unknown format {config.format!r}; use one of "
                           f"{', '.join(MAPPING_FORMATS)}")
    if fmt.needs_concept_ids:
        _require_concept_ids(mappings, vocab, config.format)
    with atomic_path(config.output) as tmp:
        fmt.write(mappings, reviews, config, vocab, run, tmp)
    return config.output


def _require_concept_ids(mappings: pd.DataFrame, vocab, fmt: str) -> None:
    if "concept_id" not in mappings.columns:
        raise CodemapError(f"--format {fmt} needs OMOP concept ids, and target {vocab.id} "
                           f"({vocab.version}) has none: map onto an OMOP vocabulary (Athena "
                           f"CONCEPT table, or a vocabulary file with a concept_id column), or "
                           f"use --format sssom or csv")


def _omop_table(mappings: pd.DataFrame, reviews: pd.DataFrame, config, run: dict) -> pd.DataFrame:
    start = str(run.get("date", ""))[:10] or "1970-01-01"
    source_vocab = (config.source_vocabulary or Path(str(run.get("source", "local"))).stem)[:20]
    out = pd.DataFrame({
        "source_code": mappings["source_code"], "source_concept_id": 0,
        "source_vocabulary_id": source_vocab,
        "source_code_description": mappings["source_text"].str.slice(0, 255),
        "target_concept_id": mappings["concept_id"],
        "target_vocabulary_id": mappings.get("vocabulary_id", pd.Series("", index=mappings.index)),
        "valid_start_date": start, "valid_end_date": OMOP_END_DATE, "invalid_reason": ""})
    if config.unmapped_as_zero:
        done = set(mappings["source_key"])
        ignored = reviews.groupby("source_key")["decision"].transform(lambda d: (d == "ignored").any())
        rest = reviews[~reviews["source_key"].isin(done) & ~ignored].drop_duplicates("source_key")
        out = pd.concat([out, pd.DataFrame({
            "source_code": rest["source_code"], "source_concept_id": 0,
            "source_vocabulary_id": source_vocab,
            "source_code_description": rest["source_text"].str.slice(0, 255),
            "target_concept_id": 0, "target_vocabulary_id": "None",
            "valid_start_date": start, "valid_end_date": OMOP_END_DATE, "invalid_reason": ""})],
            ignore_index=True)
    return out[OMOP_STCM_COLUMNS]


def _usagi_table(mappings: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
    """One row per (source, target) as Usagi saves them; sources without an approved target keep
    their state and rank-1 candidate, so the file opens in Usagi as a work in progress."""
    now_ms = int(pd.Timestamp.now(tz="UTC").timestamp() * 1000)
    done = set(mappings["source_key"])
    rest = reviews[~reviews["source_key"].isin(done)].copy()
    rest["state"] = rest.groupby("source_key")["decision"].transform(_group_state)
    rest = rest.sort_values(["source_key", "rank"]).drop_duplicates("source_key")
    rows = []
    for frame, approved in ((mappings, True), (rest, False)):
        for r in frame.itertuples(index=False):
            status = ("AUTO_MAPPED" if r.automatic else "APPROVED") if approved else r.state.upper()
            rows.append({
                "sourceCode": r.source_code, "sourceName": r.source_text, "sourceFrequency": -1,
                "sourceAutoAssignedConceptIds": "",
                "matchScore": "" if pd.isna(pd.to_numeric(r.score, errors="coerce"))
                else f"{float(r.score):.2f}",
                "mappingStatus": status, "equivalence": USAGI_EQUIVALENCE.get(r.equivalence, "UNREVIEWED"),
                "statusSetBy": r.reviewer, "statusSetOn": now_ms if r.reviewer else 0,
                "conceptId": getattr(r, "concept_id", "") if approved else 0,
                "conceptName": r.target_name if approved else "",
                "domainId": getattr(r, "domain_id", "") if approved else "",
                "mappingType": "MAPS_TO", "comment": r.comment, "createdBy": r.reviewer,
                "createdOn": now_ms if approved else 0, "assignedReviewer": ""})
    return pd.DataFrame(rows, columns=USAGI_COLUMNS)


def _group_state(decisions: pd.Series) -> str:
    """A source's Usagi state when nothing is approved: flagged or ignored win, else unchecked."""
    for state in ("flagged", "ignored"):
        if (decisions == state).any():
            return state
    return "unchecked"


def no_match_sources(mappings: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
    """One row per source that `codemap map` suggested no_match for and nobody approved a target
    for: SSSOM lists them against sssom:NoTermFound, OMOP (--unmapped-as-zero) as concept 0."""
    if "suggestion" not in reviews.columns:
        return reviews.iloc[0:0]
    rest = reviews[(reviews["suggestion"] == "no_match") & ~reviews["source_key"].isin(
        set(mappings["source_key"])) & (reviews["decision"] != "ignored")]
    return rest.sort_values(["source_key", "rank"]).drop_duplicates("source_key")


def _write_sssom(mappings: pd.DataFrame, config, vocab, run: dict, path: Path,
                 missing: pd.DataFrame) -> None:
    import datetime
    from urllib.parse import quote

    subject_prefix = "local"
    object_prefix = _curie_prefix(str(mappings["vocabulary_id"].iloc[0])
                                  if "vocabulary_id" in mappings and len(mappings) else vocab.id)
    source_name = Path(str(run.get("source", "source"))).stem
    today = datetime.date.today().isoformat()
    curie_map = {
        subject_prefix: f"urn:codemap:{quote(source_name)}:",
        object_prefix: KNOWN_PREFIXES.get(object_prefix, f"urn:codemap:{object_prefix}:"),
        "skos": "http://www.w3.org/2004/02/skos/core#",
        "semapv": "https://w3id.org/semapv/vocab/",
        "orcid": "https://orcid.org/",
        "sssom": "https://w3id.org/sssom/",
    }
    set_id = config.mapping_set_id or f"urn:codemap:mapping-set:{quote(config.output.stem)}"
    header = ["curie_map:"] + [f"  {k}: {_yaml_str(v)}" for k, v in curie_map.items()] + [
        f"mapping_set_id: {_yaml_str(set_id)}",
        f"license: {_yaml_str(config.license)}",
        f"mapping_date: {today}",
        f"mapping_tool: {_yaml_str('codemap ' + str(run.get('codemap_version', '')))}",
        f"subject_source_version: {_yaml_str(source_name)}",
        f"object_source_version: {_yaml_str(f'{vocab.id} {vocab.version}')}",
    ]
    author = mappings["reviewer"].where(mappings["reviewer"].str.contains(":") & ~mappings["automatic"], "")
    table = pd.DataFrame({
        "subject_id": subject_prefix + ":" + mappings["source_code"].map(lambda c: quote(c, safe="")),
        "subject_label": mappings["source_text"],
        "predicate_id": mappings["equivalence"].map(SSSOM_PREDICATES).fillna("skos:closeMatch"),
        "object_id": object_prefix + ":" + mappings["target_code"].map(lambda c: quote(c, safe="")),
        "object_label": mappings["target_name"],
        "mapping_justification": mappings["automatic"].map(
            {True: "semapv:SemanticSimilarityThresholdMatching", False: "semapv:ManualMappingCuration"}),
        # The calibrated probability when the workbook has one; the raw score otherwise.
        "confidence": mappings["confidence"] if "confidence" in mappings else mappings["score"],
        "author_id": author,
        "author_label": mappings["reviewer"].where(~mappings["automatic"], ""),
        "mapping_date": today,
        "comment": mappings["comment"],
    })[SSSOM_COLUMNS]
    if len(missing):
        confidence = pd.to_numeric(missing.get("confidence"), errors="coerce")
        table = pd.concat([table, pd.DataFrame({
            "subject_id": subject_prefix + ":" + missing["source_code"].map(lambda c: quote(c, safe="")),
            "subject_label": missing["source_text"], "predicate_id": "skos:exactMatch",
            "object_id": NO_TERM_FOUND, "object_label": "",
            "mapping_justification": "semapv:SemanticSimilarityThresholdMatching",
            "confidence": (1 - confidence).round(4) if confidence is not None else "",
            "author_id": "", "author_label": "", "mapping_date": today,
            "comment": "codemap no_match suggestion: no candidate is likely right"})],
            ignore_index=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(f"# {line}\n" for line in header))
        table.to_csv(handle, sep="\t", index=False)


def _curie_prefix(name: str) -> str:
    """A vocabulary id as a CURIE prefix: letters, digits and underscores, starting with a letter."""
    import re

    prefix = re.sub(r"[^A-Za-z0-9_]", "_", name) or "target"
    return prefix if prefix[0].isalpha() else f"v_{prefix}"


def _yaml_str(value: str) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class MappingFormat:
    """An exchange format of approved mappings: how it is written, and whether it needs OMOP
    concept ids. A new format is one function and one line in MAPPING_FORMATS."""

    write: Callable  # (mappings, reviews, config, vocab, run, path) → None
    needs_concept_ids: bool = False


def _write_omop(mappings, reviews, config, vocab, run, path) -> None:
    # Athena and CDM loaders use tab-separated files; .csv asks for commas.
    sep = "," if config.output.suffix.lower() == ".csv" else "\t"
    _omop_table(mappings, reviews, config, run).to_csv(path, sep=sep, index=False)


def _write_csv(mappings, reviews, config, vocab, run, path) -> None:
    out = mappings.reindex(columns=CSV_MAPPING_COLUMNS)
    out.apply(lambda col: col.map(escape_formula)).to_csv(path, index=False)


MAPPING_FORMATS = {
    "omop": MappingFormat(_write_omop, needs_concept_ids=True),
    "sssom": MappingFormat(lambda m, r, c, v, run, path: _write_sssom(
        m, c, v, run, path, no_match_sources(m, r))),
    "usagi": MappingFormat(lambda m, r, c, v, run, path: _usagi_table(m, r).to_csv(
        path, index=False), needs_concept_ids=True),
    "csv": MappingFormat(_write_csv),
}
