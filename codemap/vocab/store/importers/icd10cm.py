"""ICD-10-CM tabular list XML as CMS/NCHS ship it (`icd10cm_tabular_2026.xml`): chapters,
sections and `diag` codes with their descriptions; inclusion terms become synonyms and the
nesting (code → parent code → section → chapter) becomes `is_a`. Streamed with iterparse.

Seven-character extensions (`sevenChrDef`, on a code or the nearest code above it) are expanded
as the tabular list's conventions say: each code without children below such a definition gets
one code per extension, padded with the placeholder X to six characters (S30.1 + A → S30.1XXA,
named "Contusion of abdominal wall, initial encounter"), `is_a` the code it extends, which is
then not billable. These are the codes a claim carries, and those a mapping made on an earlier
release holds (`codemap memory recheck` compares them code for code). The XML alone allows a few
more extensions than the release's code list (76 in 2026, excluded by rules in notes); those
are kept.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import duckdb

from ....errors import CodemapError
from .base import ImportOptions, ImportResult, chunk_writers

_CONCEPT_COLUMNS = ["code", "name", "vocabulary", "status", "kind", "billable", "chapter"]
_NODES = {"chapter", "section", "diag"}
NOTICE = ("ICD-10-CM (National Center for Health Statistics, CDC); public domain in the "
          "United States.")


def default_name(path: Path) -> str:
    return "ICD10CM"


def run(con: duckdb.DuckDBPyConnection, path: Path, options: ImportOptions) -> ImportResult:
    if path.is_dir():
        raise CodemapError(f"{path}: is a folder; give the tabular XML file")
    with chunk_writers(con, _CONCEPT_COLUMNS) as writers:
        version = _read(path, writers)
    return ImportResult(version=options.version or version, sources=[path], notice=NOTICE)


def _read(path: Path, writers) -> str:
    """Parse `path`, sending every chapter, section and code to the writers; returns <version>."""
    version = ""
    tags: list[str] = []  # the open elements, to know where a <name>, <desc> or <note> sits
    nodes: list[dict] = []  # the open chapters, sections and diags
    parser = ET.iterparse(path, events=("start", "end"))
    try:
        for event, elem in parser:
            if event == "start":
                if not tags and elem.tag != "ICD10CM.tabular":
                    raise CodemapError(f"{path}: root element is <{elem.tag}>, not "
                                       f"<ICD10CM.tabular>; is this the ICD-10-CM tabular XML?")
                tags.append(elem.tag)
                if elem.tag in _NODES:
                    nodes.append({"kind": elem.tag, "code": _section_code(elem.get("id", "")),
                                  "synonyms": [], "children": 0, "seventh": {}})
                continue
            tags.pop()
            parent = tags[-1] if tags else ""
            text = " ".join((elem.text or "").split())
            if elem.tag == "version" and parent == "ICD10CM.tabular":
                version = text
            elif elem.tag == "name" and parent in {"chapter", "diag"}:
                nodes[-1]["code"] = text if parent == "diag" else f"Chapter {text}"
            elif elem.tag == "desc" and parent in _NODES:
                nodes[-1]["name"] = text
            elif elem.tag == "note" and parent == "inclusionTerm" and tags[-2] == "diag":
                nodes[-1]["synonyms"].append(text)
            elif elem.tag == "extension" and parent == "sevenChrDef":
                nodes[-1]["seventh"][elem.get("char", "")] = text
            elif elem.tag in _NODES:
                node = nodes.pop()
                _emit(path, node, nodes, writers)
                elem.clear()
    except ET.ParseError as exc:
        raise CodemapError(f"{path}: line {exc.position[0]}: not well-formed XML "
                           f"({str(exc).split(':')[0]})") from None
    return version


def _section_code(section_id: str) -> str:
    """A section's code: its range ("A00-A09"); a section of one category (id "B10", as the code
    it holds) as "B10-B10", so that no two concepts share a code."""
    return section_id if not section_id or "-" in section_id else f"{section_id}-{section_id}"


def _emit(path: Path, node: dict, open_nodes: list[dict], writers) -> None:
    concepts, names, relations = writers
    if not node["code"] or not node.get("name"):
        raise CodemapError(f"{path}: a <{node['kind']}> without "
                           f"{'name' if not node['code'] else 'desc'} (code {node['code']!r})")
    kind = {"diag": "code"}.get(node["kind"], node["kind"])
    chapter = next((n["code"] for n in open_nodes if n["kind"] == "chapter"), "")
    extended = kind == "code" and node["children"] == 0 and _extend(node, open_nodes, chapter,
                                                                      writers)
    billable = "yes" if kind == "code" and node["children"] == 0 and not extended else "no"
    concepts.add((node["code"], node["name"], "ICD10CM", "active", kind, billable, chapter))
    names.add((node["code"], node["name"], "preferred", "en"))
    for synonym in dict.fromkeys(node["synonyms"]):
        names.add((node["code"], synonym, "inclusion_term", "en"))
    if open_nodes:
        open_nodes[-1]["children"] += 1
        relations.add((node["code"], "is_a", open_nodes[-1]["code"]))


def _extend(node: dict, open_nodes: list[dict], chapter: str, writers) -> bool:
    """Send the seven-character codes of a code without children, by the extensions defined on
    it or on the nearest code above it; returns whether it had any."""
    seventh = node["seventh"] or next((n["seventh"] for n in reversed(open_nodes)
                                       if n["seventh"]), {})
    concepts, names, relations = writers
    stem = node["code"] if "." in node["code"] else node["code"] + "."
    stem = stem.ljust(7, "X")  # "S30.1" → "S30.1XX": the placeholder fills six characters
    for char, meaning in seventh.items():
        code, name = stem + char, f"{node['name']}, {meaning}"
        concepts.add((code, name, "ICD10CM", "active", "code", "yes", chapter))
        names.add((code, name, "preferred", "en"))
        relations.add((code, "is_a", node["code"]))
    return bool(seventh)
