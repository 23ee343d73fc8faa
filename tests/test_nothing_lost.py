"""Nothing lost: several sites in one memory, several processes on one cache, every row of a
malformed file (issue #51)."""
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.errors import CodemapError
from codemap.read.readers import read_code_list, read_table
from codemap.review.harmonise import read_memory_sites
from codemap.review.memory import MappingMemory, prefill

from .conftest import EXAMPLES
from .test_local_names import reviews, vocabulary

runner = CliRunner()
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def _store(path: str, site: str, decision: str) -> None:
    """One site's apply of 200 shared local codes (a worker process's whole job)."""
    rows = [(f"C{n}", f"test {n}", "T1" if n % 2 else "T2", decision) for n in range(200)]
    with MappingMemory(path) as memory:
        memory.store(reviews(rows), vocabulary(), f"{site}.reviewed.xlsx", site=site)


def test_two_sites_with_the_same_local_codes_keep_both_and_harmonise_sees_both(tmp_path):
    path = tmp_path / "study.db"
    _store(str(path), "boston", "approved")
    _store(str(path), "leeds", "rejected")
    with MappingMemory(path) as memory:
        stored = memory.recall("T")
    assert len(stored) == 400
    assert stored.groupby("site")["decision"].agg(set).to_dict() == {
        "boston": {"approved"}, "leeds": {"rejected"}}
    # A site's second apply replaces its own decisions only.
    _store(str(path), "boston", "flagged")
    with MappingMemory(path) as memory:
        stored = memory.recall("T")
    assert stored.groupby("site")["decision"].agg(set).to_dict() == {
        "boston": {"flagged"}, "leeds": {"rejected"}}


def test_harmonise_reads_every_site_of_one_memory(tmp_path):
    target = tmp_path / "T.csv"  # the vocabulary id of vocabulary()
    pd.DataFrame({"code": ["T1", "T2"], "name": ["concept T1", "concept T2"]}).to_csv(target, index=False)
    path = tmp_path / "study.db"
    with MappingMemory(path) as memory:
        for site, code in (("boston", "T1"), ("leeds", "T2")):
            memory.store(reviews([("GLU", "Glucose", code, "approved")]),
                         vocabulary(("T1", "T2")), f"{site}.xlsx", spec=str(target), site=site)
    sites, _ = read_memory_sites(path, None)
    assert {s.name: s.approved["target_code"].tolist() for s in sites} == {
        "boston": ["T1"], "leeds": ["T2"]}


def test_four_concurrent_applies_keep_four_sites(tmp_path):
    path = str(tmp_path / "study.db")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_store, args=(path, site, "approved"))
               for site in ("boston", "leeds", "berlin", "york")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    with MappingMemory(path) as memory:
        stored = memory.recall("T")
    assert stored.groupby("site").size().to_dict() == {s: 200 for s in ("berlin", "boston",
                                                                         "leeds", "york")}


def test_a_memory_another_process_holds_locked_is_opened_again(tmp_path, monkeypatch):
    """SQLite can answer "database is locked" at once, without its busy wait, while another
    process switches a new memory to WAL (seen once in CI: one of four concurrent applies
    failed to open). Opening waits and tries again; any other error still fails at once."""
    real_open, tries = MappingMemory._open, []

    def locked_twice(self):
        tries.append(1)
        if len(tries) <= 2:
            raise sqlite3.OperationalError("database is locked")
        real_open(self)

    monkeypatch.setattr(MappingMemory, "_open", locked_twice)
    with MappingMemory(tmp_path / "study.db") as memory:
        assert memory.recall("T").empty
    assert len(tries) == 3

    def unwritable(self):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(MappingMemory, "_open", unwritable)
    with pytest.raises(CodemapError, match="cannot be opened"):
        MappingMemory(tmp_path / "other.db")


def test_an_unsited_memory_is_rekeyed_keeping_every_row(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the schema before the site was part of the key
        db.execute("CREATE TABLE decisions (target_vocab TEXT NOT NULL, source_code TEXT NOT NULL, "
                   "source_key TEXT NOT NULL, source_text TEXT NOT NULL, target_code TEXT NOT NULL, "
                   "target_name TEXT NOT NULL, decision TEXT NOT NULL, equivalence TEXT NOT NULL, "
                   "reviewer TEXT NOT NULL, comment TEXT NOT NULL, automatic INTEGER NOT NULL, "
                   "decided_at TEXT NOT NULL, workbook TEXT NOT NULL, site TEXT NOT NULL DEFAULT '', "
                   "target_version TEXT NOT NULL DEFAULT '', PRIMARY KEY (target_vocab, "
                   "source_code, source_key, target_code))")
        db.execute("INSERT INTO decisions VALUES ('T','GLU','glucose','Glucose','T1','x','approved',"
                   "'','r','',0,'2026-01-01','/data/boston.reviewed.xlsx','','1')")
        db.execute("INSERT INTO decisions VALUES ('T','K','potassium','Potassium','T2','x','approved',"
                   "'','r','',0,'2026-01-01','/data/x.xlsx','leeds','1')")
    _store(str(path), "york", "rejected")  # shares no key with the old rows
    with MappingMemory(path) as memory:
        stored = memory.recall("T")
        keyed = [row[1] for row in memory.db.execute("PRAGMA table_info(decisions)") if row[5]]
    assert "site" in keyed
    assert stored.groupby("site").size().to_dict() == {"boston": 1, "leeds": 1, "york": 200}


def test_map_prefills_the_sites_own_decisions_and_notes_the_others(tmp_path):
    vocab = vocabulary()
    path = tmp_path / "study.db"
    with MappingMemory(path) as memory:
        memory.store(reviews([("GLU", "Glucose", "T1", "approved")]), vocab, "a.xlsx", site="boston")
        memory.store(reviews([("GLU", "Glucose", "T2", "approved")]), vocab, "b.xlsx", site="leeds")
    candidates = pd.DataFrame({"source_row": [2, 2], "source_code": ["GLU", "GLU"],
                               "source_text": ["Glucose", "Glucose"], "rank": [1, 2],
                               "target_code": ["T1", "T3"], "target_name": ["t1", "t3"],
                               "score": [0.9, 0.8], "matched_name": ["", ""]})
    filled, hit = prefill(candidates, vocab, path, "boston", "list.csv")
    by_code = filled.set_index("target_code")
    assert hit == 1 and by_code.loc["T1", "decision"] == "approved"
    assert by_code.loc["T2", "decision"] == "" and by_code.loc["T2", "memory"] == "leeds: approved"
    assert by_code.loc["T1", "memory"].startswith("earlier: approved")  # boston's own
    # No site asked and two in the memory: the list's name decides, else nothing is filled.
    assert prefill(candidates, vocab, path, None, "leeds.csv")[0].set_index(
        "target_code").loc["T2", "decision"] == "approved"
    unnamed = prefill(candidates, vocab, path, None, "list.csv")[0]
    assert set(unnamed["decision"]) == {""} and "boston: approved" in set(unnamed["memory"])


_TRACE_STALL = """
import sqlite3, sys, time
from codemap.review.memory import MappingMemory
from tests.test_local_names import reviews, vocabulary
connect = sqlite3.connect
def stalled(*args, **kwargs):
    db = connect(*args, **kwargs)
    def trace(statement):
        if statement.startswith("INSERT OR REPLACE INTO decisions"):
            print("inside", flush=True)
            time.sleep(600)
    db.set_trace_callback(trace)
    return db
sqlite3.connect = stalled
with MappingMemory(sys.argv[1]) as memory:
    memory.store(reviews([("GLU", "Glucose", "T3", "rejected")]), vocabulary(), "a.xlsx",
                 site="boston")
"""


def test_a_kill_during_apply_leaves_the_memory_as_it_was(tmp_path):
    path = tmp_path / "study.db"
    with MappingMemory(path) as memory:
        memory.store(reviews([("GLU", "Glucose", "T1", "approved")]), vocabulary(), "a.xlsx",
                     site="boston")
    child = subprocess.Popen([sys.executable, "-c", _TRACE_STALL, str(path)], text=True, env=ENV,
                             stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[1])
    assert child.stdout.readline().strip() == "inside"  # its DELETE ran, its INSERT is under way
    child.send_signal(signal.SIGKILL)
    child.wait()
    with MappingMemory(path) as memory:
        stored = memory.recall("T")
        assert memory.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert stored[["site", "target_code", "decision"]].values.tolist() == [
        ["boston", "T1", "approved"]]
    _store(str(path), "leeds", "approved")  # and it takes the next apply


_EXPORT_STALL = """
import sys, time
import codemap.export
real = codemap.export.export_model
def stalled(*args, **kwargs):
    made = real(*args, **kwargs)
    print("exported", flush=True)
    time.sleep(600)
    return made
codemap.export.export_model = stalled
from codemap.embed.models import resolve_model
from codemap.embed.onnx_cache import runtime_model
runtime_model(resolve_model(sys.argv[1]), "auto", sys.argv[2])
"""


def test_a_kill_during_an_export_leaves_a_cache_the_next_run_uses(tiny_model, tmp_path):
    models = tmp_path / "models"
    child = subprocess.Popen([sys.executable, "-c", _EXPORT_STALL, str(tiny_model), str(models)],
                             env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # Killed once the export is written into its scratch folder and before it is published: a
    # tiny model exports in a blink, so the child waits there rather than the test racing it.
    assert child.stdout.readline().strip() == "exported"
    assert list(models.glob("onnx/.*.part/export/*"))
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL
    from codemap.embed.models import resolve_model
    from codemap.embed.onnx_cache import runtime_model

    exported = runtime_model(resolve_model(str(tiny_model)), "auto", models)  # the lock is free
    assert (exported.path / "codemap.json").exists() and exported.path.parent.name == "onnx"


@pytest.mark.slow
def test_three_cold_runs_at_once_on_one_fresh_cache_agree(tmp_path):
    """The issue's scenario: three `codemap map` runs started together on a fresh model and
    index cache (model conversion, adapter merge, ONNX export, index) all succeed, alike."""
    source = tmp_path / "labs.csv"
    pd.read_csv(EXAMPLES / "labs.csv", dtype=str).head(30).to_csv(source, index=False)
    env = {**ENV, "CODEMAP_MODEL_CACHE": str(tmp_path / "models")}
    runs = [subprocess.Popen([sys.executable, "-m", "codemap", "map", str(source), "--target",
                              "LOINC", "-o", str(tmp_path / f"out{n}.csv"), "--cache-dir",
                              str(tmp_path / "cache")], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for n in range(3)]
    outputs = [run.communicate(timeout=900) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0], [err[-2000:] for _, err in outputs]
    assert any("waiting for another codemap process" in err for _, err in outputs)
    written = [pd.read_csv(tmp_path / f"out{n}.csv", dtype=str) for n in range(3)]
    for other in written[1:]:
        pd.testing.assert_frame_equal(written[0], other)


# --- every row of a malformed file ---------------------------------------------------------------

def test_a_quote_that_never_closes_is_refused_with_its_line(tmp_path):
    lines = ["code,label", "A1,Glucose", "A2,Sodium", 'A3,"Vitamin D (1'] + [
        f"A{n},Test {n}" for n in range(4, 11)]
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CodemapError, match=r"cut.csv: line 4: a quote opened here never closes"):
        read_table(path)
    result = runner.invoke(app, ["map", str(path), "--target", "LOINC", "-o",
                                 str(tmp_path / "out.csv")])
    assert result.exit_code == 2 and "line 4: a quote opened here never closes" in result.output
    assert not (tmp_path / "out.csv").exists()


def test_a_quote_that_swallows_many_lines_is_refused_even_when_it_closes(tmp_path):
    lines = ["code,label", 'A1,"Vitamin D (1'] + [f"A{n},Test {n}" for n in range(2, 60)]
    lines.append('A60,Iron"')
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CodemapError, match=r"line 2: a quote opened here runs over 60 lines"):
        read_code_list(path)


def test_a_cell_over_two_lines_is_read_and_said(tmp_path, caplog):
    path = tmp_path / "comments.csv"
    path.write_text('code,label,comment\nA1,Glucose,"fasting\nonly"\nA2,Sodium,\nA3,Iron,x\n')
    with caplog.at_level("WARNING"):
        table = read_code_list(path)
    assert table.codes == ["A1", "A2", "A3"]
    assert "1 quoted cell(s) span several lines (from line 2)" in caplog.text


def test_excel_unicode_text_is_read(tmp_path):
    """Excel's "Unicode Text" export: UTF-16 with a byte-order mark, tab-separated."""
    path = tmp_path / "labs.txt"
    path.write_bytes("code\tlabel\r\nA1\tKalium i.S.\r\nA2\tNatrium µmol\r\nA3\tGlucose\r\n"
                     .encode("utf-16"))
    table = read_code_list(path)
    assert table.codes == ["A1", "A2", "A3"] and table.texts[1] == "Natrium µmol"
