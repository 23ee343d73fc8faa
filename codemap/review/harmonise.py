"""Harmonise several sites: their reviewed mappings side by side per target concept.

Input is each site's reviewed workbook (what `codemap apply` reads), or one mapping memory
holding every site's decisions (`apply --memory [--site NAME]`; the site is the workbook's file
name unless named). Output is
one folder: `harmonised.xlsx` (a sheet per table, the review workbook's conventions), one CSV per
sheet, and per site an SSSOM mapping set and, when the target has OMOP concept ids, OMOP
source_to_concept_map rows. The tables:

- crosswalk: one row per target concept, each site's local codes, names, units and equivalence;
- conflicts: a local code approved to several concepts, same-meaning names of two sites sent to
  different concepts (same_meaning.py), units of two sites that read as different LOINC
  properties for one code, targets the vocabulary marks deprecated (with their replacement);
- site_coverage and concept_coverage: what share of each site is mapped, and which concepts
  every site has.

Every input is read and checked before anything is written; the folder is replaced whole.
"""
from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import HarmoniseConfig
from ..domains import name_property, unit_properties
from ..errors import CodemapError
from ..files import temp_dir_beside
from ..vocab.target import load_target
from ..vocab.vocabulary import Vocabulary, deprecated_codes
from .apply import read_reviewed_workbook, resolve_reviews, target_from_run
from .memory import MappingMemory, site_name, site_of
from .harmonise_write import write_folder
from .same_meaning import calibrate, shipped_threshold, similar_pairs

log = logging.getLogger(__name__)

CONFLICT_COLUMNS = ["kind", "target_code", "target_name", "site", "source_code", "source_text",
                    "unit", "other_site", "other_source_code", "other_source_text", "other_unit",
                    "other_target_code", "similarity", "detail"]
SITE_FIELDS = ["source_key", "source_code", "source_text", "unit", "target_code", "target_name",
               "decision", "equivalence", "reviewer", "comment", "automatic", "proposed"]
# A source's state when it has several rows: the first of these any row has.
STATE_ORDER = ["approved", "flagged", "ignored", "rejected", "unchecked"]
_REPLACEMENT_RELATIONS = {"maps to", "replaced by", "replaced_by", "map_to", "same_as"}
_REPLACEMENT_COLUMNS = ("replaced_by", "map_to", "maps_to", "replacement")
JOIN = " | "


@dataclass
class Site:
    """One site's reviews, every row, normalised (SITE_FIELDS), and where they came from."""

    name: str
    origin: str
    reviews: pd.DataFrame

    @property
    def approved(self) -> pd.DataFrame:
        return self.reviews[self.reviews["decision"] == "approved"].drop_duplicates(
            ["source_key", "target_code"])


@dataclass
class Harmonised:
    """The four tables, and what they were made from."""

    tables: dict[str, pd.DataFrame]
    sites: list[Site]
    vocab: Vocabulary
    threshold: str  # the same-meaning threshold, described


# --- input -----------------------------------------------------------------------------------

def parse_sites(specs: list[str]) -> tuple[tuple[str, Path], ...]:
    """`NAME=FILE` or `FILE` (named by site_name) → ((site, path), …); a site named twice is an
    error, since its mappings would silently replace each other."""
    sites: dict[str, Path] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        name, path = (name.strip(), Path(file)) if sep and name.strip() else (site_name(spec), Path(spec))
        if name in sites:
            raise CodemapError(f"site {name!r} is given twice ({sites[name]} and {path}); name "
                               f"them apart with --site NAME=FILE")
        sites[name] = path
    return tuple(sites.items())


def read_workbook_sites(sites: tuple[tuple[str, Path], ...],
                        target: str | None) -> tuple[list[Site], Vocabulary]:
    """Each site's reviewed workbook, checked as `apply` checks it; all must have been mapped
    onto one vocabulary version (the run sheets' target and target_version)."""
    if len(sites) < 2:
        raise CodemapError("harmonise needs at least two sites (--site NAME=FILE, twice or more)")
    read = []
    for name, path in sites:
        if not Path(path).exists():
            raise CodemapError(f"{path}: no such file (site {name})")
        frame, run = read_reviewed_workbook(Path(path))
        read.append((name, Path(path), frame, run))
    _check_one_target(read)
    vocab = target_from_run(read[0][3], read[0][1], target)
    out = []
    for name, path, frame, run in read:
        reviews, problems = resolve_reviews(frame, vocab, None, allow_multiple=True)
        if problems:
            raise CodemapError(f"{path} (site {name}): {len(problems)} problem(s), nothing "
                               f"written: {'; '.join(problems[:3])}")
        unit_col = str(run.get("unit_column", "") or "")
        reviews["unit"] = reviews[unit_col].astype(str).str.strip() if unit_col in reviews else ""
        out.append(Site(name, str(path), reviews[SITE_FIELDS].reset_index(drop=True)))
    return out, vocab


def _check_one_target(read: list) -> None:
    first_name, first_path, _, first_run = read[0]
    want = _target_of(first_run)
    for name, path, _, run in read[1:]:
        got = _target_of(run)
        if got != want:
            raise CodemapError(f"map every site onto one vocabulary version: site {name} was "
                               f"mapped onto {got[0]} ({got[1]}), site {first_name} onto "
                               f"{want[0]} ({want[1]}) ({path}, {first_path})")


def _target_of(run: dict) -> tuple[str, str]:
    return (str(run.get("target", "") or "?"), str(run.get("target_version", "") or "?"))


def read_memory_sites(path: Path, target: str | None) -> tuple[list[Site], Vocabulary]:
    """Every site's decisions from one mapping memory, a site per stored `site` (memory.site_of).
    The memory keeps decided rows only, so a source nobody decided on is not counted."""
    if not Path(path).exists():
        raise CodemapError(f"{path}: no such mapping memory")
    with MappingMemory(path) as memory:
        known = memory.vocabularies()
        if known.empty:
            raise CodemapError(f"{path}: the mapping memory holds no decisions")
        if target is None and len(known) > 1:
            raise CodemapError(f"{path}: decisions for {', '.join(known['target_vocab'])}; "
                               f"choose one with --target")
        row = known.iloc[0] if target is None else None
        vocab = (load_target(row["target_spec"] or row["target_vocab"], store_dir=row["store_dir"] or None)
                 if row is not None else load_target(target))
        stored = memory.recall(vocab.id)
    if stored.empty:
        raise CodemapError(f"{path}: no decisions for target {vocab.id}")
    stored = stored.assign(source_key=stored["source_code"] + "\x00" + stored["source_key"], unit="",
                           automatic=stored["automatic"].astype(bool), proposed=True)
    sites = [Site(name, f"{path} ({', '.join(sorted(set(group['workbook'])))})",
                  group[SITE_FIELDS].reset_index(drop=True))
             for name, group in stored.groupby(site_of(stored), sort=True)]
    if len(sites) < 2:
        raise CodemapError(f"{path}: decisions from one site only ({sites[0].name}); harmonise "
                           f"needs two or more")
    return sites, vocab


# --- the tables --------------------------------------------------------------------------------

def crosswalk(sites: list[Site], vocab: Vocabulary) -> pd.DataFrame:
    """One row per approved target concept; per site its codes, names, units and equivalence
    (empty where the site has no mapping to the concept)."""
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    codes = sorted({c for s in sites for c in s.approved["target_code"]})
    table = pd.DataFrame({"target_code": codes, "target_name": [names.get(c, "") for c in codes]})
    table["property"] = table["target_name"].map(name_property)
    table["sites"] = 0
    for site in sites:
        grouped = site.approved.groupby("target_code")
        for field, column in (("source_code", "code"), ("source_text", "name"), ("unit", "unit"),
                              ("equivalence", "equivalence")):
            values = grouped[field].agg(lambda v: JOIN.join(dict.fromkeys(x for x in v if x)))
            table[f"{site.name}_{column}"] = table["target_code"].map(values).fillna("")
        table["sites"] += table["target_code"].isin(grouped.groups).astype(int)
    return table


def site_coverage(sites: list[Site]) -> pd.DataFrame:
    """Per site: sources, how many of them end approved, flagged, rejected… and the shares."""
    rows = []
    for site in sites:
        states = site.reviews.groupby("source_key")["decision"].agg(_source_state)
        counts = states.value_counts()
        n = len(states)
        row = {"site": site.name, "sources": n}
        row.update({state: int(counts.get(state, 0)) for state in STATE_ORDER})
        row["unmapped"] = n - row["approved"]
        for state in ("approved", "unmapped", "rejected"):
            row[f"{state}_share"] = round(row[state] / n, 4) if n else 0.0
        row["concepts"] = site.approved["target_code"].nunique()
        row["origin"] = site.origin
        rows.append(row)
    return pd.DataFrame(rows)


def _source_state(decisions: pd.Series) -> str:
    return next((s for s in STATE_ORDER if (decisions == s).any()), "unchecked")


def concept_coverage(table: pd.DataFrame, sites: list[Site]) -> pd.DataFrame:
    """Per concept: how many sites map to it, which do not; every site first."""
    names = [s.name for s in sites]
    has = pd.DataFrame({n: table[f"{n}_code"] != "" for n in names})
    out = table[["target_code", "target_name", "sites"]].copy()
    out["all_sites"] = out["sites"] == len(names)
    out["share_of_sites"] = (out["sites"] / len(names)).round(4)
    out["missing_at"] = has.apply(lambda r: ", ".join(n for n in names if not r[n]), axis=1)
    return out.sort_values(["sites", "target_code"], ascending=[False, True], kind="stable")


# --- conflicts -----------------------------------------------------------------------------------

def conflicts(sites: list[Site], vocab: Vocabulary, encoder, threshold: float) -> pd.DataFrame:
    """Every conflict of the four kinds, one row each (CONFLICT_COLUMNS)."""
    names = dict(zip(vocab.concepts["code"], vocab.concepts["name"]))
    rows = (code_to_many(sites) + same_name_elsewhere(sites, encoder, threshold)
            + unit_disagreements(sites, names) + deprecated_targets(sites, vocab))
    table = pd.DataFrame(rows, columns=CONFLICT_COLUMNS)
    table["target_name"] = table["target_code"].map(names).fillna("")
    return table


def code_to_many(sites: list[Site]) -> list[dict]:
    """A local code approved to more than one concept at its site."""
    rows = []
    for site in sites:
        for code, group in site.approved.groupby("source_code", sort=True):
            targets = list(dict.fromkeys(group["target_code"]))
            if len(targets) > 1:
                rows.append({"kind": "code_to_many", "target_code": targets[0], "site": site.name,
                             "source_code": code, "source_text": group["source_text"].iloc[0],
                             "unit": group["unit"].iloc[0], "other_target_code": JOIN.join(targets[1:]),
                             "detail": f"{code} is approved to {len(targets)} concepts: "
                                       f"{', '.join(targets)}"})
    return rows


def same_name_elsewhere(sites: list[Site], encoder, threshold: float) -> list[dict]:
    """Two sites' names at or above the same-meaning threshold, approved to different concepts
    (and neither site also approved the other's concept for that name)."""
    approved = [s.approved.reset_index(drop=True) for s in sites]
    texts = [a["source_text"].tolist() for a in approved]
    vectors = [encoder.encode(t) for t in texts]
    rows = []
    for i in range(len(sites)):
        for j in range(i + 1, len(sites)):
            a, b = approved[i], approved[j]
            targets_a = a.groupby("source_key")["target_code"].agg(set)
            targets_b = b.groupby("source_key")["target_code"].agg(set)
            for x, y, cosine in similar_pairs(texts[i], texts[j], vectors[i], vectors[j], threshold):
                ra, rb = a.iloc[x], b.iloc[y]
                if targets_a[ra.source_key] & targets_b[rb.source_key]:
                    continue
                rows.append(_pair_row("same_name_other_concept", sites[i].name, ra, sites[j].name,
                                      rb, round(cosine, 4),
                                      f"{ra.source_text!r} and {rb.source_text!r} mean the same "
                                      f"(cosine {cosine:.3f} ≥ {threshold:.3f}) but go to "
                                      f"{ra.target_code} and {rb.target_code}"))
    return rows


def unit_disagreements(sites: list[Site], names: dict) -> list[dict]:
    """Sites whose units for one concept read as different LOINC properties; the row names the
    site whose unit does not fit the concept's property (when the concept states one)."""
    rows = []
    seen = pd.concat([s.approved.assign(site=s.name) for s in sites], ignore_index=True)
    seen = seen[seen["unit"] != ""]
    for code, group in seen.groupby("target_code", sort=True):
        if group["site"].nunique() < 2:
            continue
        prop = name_property(names.get(code, ""))
        read = [(r, unit_properties(r.unit)) for r in group.itertuples(index=False)]
        for k, (r, props) in enumerate(read):
            for r2, props2 in read[k + 1:]:
                if r2.site == r.site or not props or not props2 or props & props2:
                    continue
                bad, good = (r2, r) if prop and prop in props else (r, r2)
                rows.append(_pair_row(
                    "unit_property", bad.site, bad, good.site, good, None,
                    f"{code} ({prop or 'property unknown'}): {bad.site} gives {bad.unit!r} "
                    f"({'/'.join(sorted(unit_properties(bad.unit)))}), {good.site} gives "
                    f"{good.unit!r} ({'/'.join(sorted(unit_properties(good.unit)))})"))
    return rows


def deprecated_targets(sites: list[Site], vocab: Vocabulary) -> list[dict]:
    """Approved targets the vocabulary marks deprecated, with the replacement it names."""
    stale = deprecated_codes(vocab)
    replacement = _replacements(vocab)
    rows = []
    for site in sites:
        for r in site.approved[site.approved["target_code"].isin(stale)].itertuples(index=False):
            new = replacement.get(r.target_code, "")
            rows.append({"kind": "deprecated_target", "target_code": r.target_code,
                         "site": site.name, "source_code": r.source_code,
                         "source_text": r.source_text, "unit": r.unit, "other_target_code": new,
                         "detail": f"{r.target_code} is deprecated in {vocab.id} {vocab.version}"
                                   + (f"; replaced by {new}" if new else "; no replacement named")})
    return rows


def _replacements(vocab: Vocabulary) -> dict:
    found: dict = {}
    if vocab.relations is not None and len(vocab.relations):
        rel = vocab.relations
        hits = rel[rel["relation"].str.lower().isin(_REPLACEMENT_RELATIONS) & (rel["head"] != rel["tail"])]
        found.update(hits.groupby("head")["tail"].agg(lambda t: JOIN.join(t)).to_dict())
    for column in _REPLACEMENT_COLUMNS:
        if column in vocab.concepts.columns:
            values = vocab.concepts[["code", column]].astype(str)
            found.update({c: v for c, v in zip(values["code"], values[column]) if v.strip()})
    return found


def _pair_row(kind, site, row, other_site, other, similarity, detail) -> dict:
    return {"kind": kind, "target_code": row.target_code, "site": site,
            "source_code": row.source_code, "source_text": row.source_text, "unit": row.unit,
            "other_site": other_site, "other_source_code": other.source_code,
            "other_source_text": other.source_text, "other_unit": other.unit,
            "other_target_code": other.target_code, "similarity": similarity, "detail": detail}


# --- the run -----------------------------------------------------------------------------------

def harmonise(config: HarmoniseConfig, encoder=None, progress: bool = False) -> Harmonised:
    """Read the sites, build the tables and write the output folder; returns the tables.

    `encoder` (an embed.Encoder) is loaded from config.encoder when not given, saying so first:
    the same-meaning judge is another model than the sites mapped with (see
    config.SAME_MEANING_MODEL), exported to ONNX on its first use (`progress`: its progress
    lines). Raises CodemapError for a bad input before anything is written.
    """
    if bool(config.sites) == (config.memory is not None):
        raise CodemapError("give the sites' workbooks (--site) or one --memory, not both or neither")
    if config.memory is not None:
        sites, vocab = read_memory_sites(config.memory, config.target)
    else:
        sites, vocab = read_workbook_sites(config.sites, config.target)
    if encoder is None:
        from ..embed import Encoder

        log.warning("loading the same-meaning judge, model %r (its ONNX export is made once, on "
                    "first use)", config.encoder.model)
        encoder = Encoder.load(config.encoder, progress=progress)
    threshold, described = _threshold(config, encoder, vocab)
    table = crosswalk(sites, vocab)
    tables = {"crosswalk": table, "conflicts": conflicts(sites, vocab, encoder, threshold),
              "site_coverage": site_coverage(sites), "concept_coverage": concept_coverage(table, sites)}
    result = Harmonised(tables, sites, vocab, described)
    write_harmonised(result, config.output)
    return result


def _threshold(config: HarmoniseConfig, encoder, vocab: Vocabulary) -> tuple[float, str]:
    if config.name_threshold is not None:
        return config.name_threshold, f"{config.name_threshold:g} (given with --name-threshold)"
    found = (shipped_threshold(config.encoder.model, vocab, config.name_precision)
             or calibrate(encoder, vocab, config.name_precision, model=config.encoder.model))
    return found.value, found.describe()


def write_harmonised(result: Harmonised, output: Path) -> Path:
    """Write the whole folder beside `output`, then swap it in: a failed run leaves the old one."""
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = temp_dir_beside(output)  # a new folder's mode (the umask's), not mkdtemp's 0700
    try:
        write_folder(result, staging)
        if output.exists():
            old = output.with_name(f".{output.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            output.rename(old)
            staging.rename(output)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(output)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return output
