"""Reviews teach the index: texts approved at one site rank as names of their concepts at the
next (codemap.vocab.local_names, codemap.rank.local_names), with the memory that stores them."""
import sqlite3

import numpy as np
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app
from codemap.config import IndexConfig, RankConfig
from codemap.embed.index import NameIndex, build_faiss_index
from codemap.rank.hybrid import rank_hybrid
from codemap.rank.local_names import LocalIndex
from codemap.review.memory import MappingMemory
from codemap.vocab import Vocabulary
from codemap.vocab.local_names import LocalNames

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def reviews(rows: list[tuple]) -> pd.DataFrame:
    """Resolved review rows as `apply` hands them to the memory: (code, text, target, decision)."""
    return pd.DataFrame([{"source_code": c, "source_text": t, "target_code": g, "target_name": g,
                          "decision": d, "equivalence": "", "reviewer": "dr-a", "comment": "",
                          "automatic": False} for c, t, g, d in rows])


def vocabulary(codes=("T1", "T2", "T3"), invalid=()) -> Vocabulary:
    concepts = pd.DataFrame({"code": list(codes), "name": [f"concept {c}" for c in codes],
                             "invalid_reason": ["D" if c in invalid else "" for c in codes]})
    names = concepts[["code", "name"]].assign(name_type="", lang="")
    return Vocabulary("T", "2", concepts, names)


def test_memory_keeps_sites_and_gives_local_names(tmp_path):
    vocab = vocabulary()
    with MappingMemory(tmp_path / "m.db") as memory:
        memory.store(reviews([("A1", "Krea  enz.", "T1", "approved"),
                              ("A2", "Krea enz.", "T2", "rejected")]), vocab, "leeds.reviewed.xlsx")
        memory.store(reviews([("B7", "KREA ENZ.", "T1", "approved")]), vocab, "x.xlsx", site="york")
        auto = reviews([("C1", "Natrium", "T3", "approved")]).assign(automatic=True)
        memory.store(auto, vocab, "york.xlsx")
        names = memory.local_names("T")
    assert len(names) == 1  # one text key, one concept: the automatic approval teaches nothing
    row = names.approved.iloc[0]
    assert (row["code"], row["sites"], row["versions"]) == ("T1", ("leeds", "york"), ("2",))
    assert names.rejected_for("krea enz.") == {"T2": ("leeds",)}


def test_an_older_memory_is_opened_and_its_sites_read_from_workbooks(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the schema before sites were stored
        db.execute("CREATE TABLE decisions (target_vocab TEXT NOT NULL, source_code TEXT NOT NULL, "
                   "source_key TEXT NOT NULL, source_text TEXT NOT NULL, target_code TEXT NOT NULL, "
                   "target_name TEXT NOT NULL, decision TEXT NOT NULL, equivalence TEXT NOT NULL, "
                   "reviewer TEXT NOT NULL, comment TEXT NOT NULL, automatic INTEGER NOT NULL, "
                   "decided_at TEXT NOT NULL, workbook TEXT NOT NULL, PRIMARY KEY (target_vocab, "
                   "source_code, source_key, target_code))")
        db.execute("INSERT INTO decisions VALUES ('T','1','glu','GLU','T1','x','approved','','r','',0,"
                   "'2026-01-01','/data/boston.reviewed.xlsx')")
    with MappingMemory(path) as memory:
        assert memory.local_names("T").approved["sites"].tolist() == [("boston",)]


def test_a_release_flags_names_of_deprecated_or_gone_concepts(tmp_path):
    with MappingMemory(tmp_path / "m.db") as memory:
        memory.store(reviews([("1", "a", "T1", "approved"), ("2", "b", "T2", "approved"),
                              ("3", "c", "T3", "approved")]), vocabulary(), "s.xlsx")
        names = memory.local_names("T")
    usable, flagged = names.usable(vocabulary(codes=("T1", "T2"), invalid=("T2",)))
    assert usable.approved["code"].tolist() == ["T1"]
    assert dict(zip(flagged["code"], flagged["problem"])) == {"T2": "deprecated in T 2",
                                                              "T3": "no longer in T 2"}
    other = Vocabulary("U", "1", vocabulary().concepts, vocabulary().names)
    assert len(names.usable(other)[0]) == 0  # never another target's


def test_forget_undoes_a_decision(tmp_path):
    with MappingMemory(tmp_path / "m.db") as memory:
        memory.store(reviews([("1", "Krea", "T1", "approved"), ("2", "Glu", "T2", "approved")]),
                     vocabulary(), "s.xlsx")
        with pytest.raises(Exception, match="name what to forget"):
            memory.forget("T")
        assert memory.forget("T", text="KREA", code="T1") == 1
        assert memory.local_names("T").approved["code"].tolist() == ["T2"]


def test_exact_and_pooled_ranking_read_local_names_alike(tmp_path):
    """The two scoring paths (every name; the IVF pool) score local names the same way, and a
    local name counts only for a row written as it is (case and punctuation aside)."""
    from codemap.rank.lexical import load_or_build_lexical

    rng = np.random.default_rng(0)
    codes = [f"T{i}" for i in range(300)]
    vocab = vocabulary(codes=codes)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = ["concept T5 here", "concept T9 here"]  # approved for T200 and T201
    names = LocalNames("T", pd.DataFrame({"key": texts, "code": ["T200", "T201"], "name": texts,
                                          "sites": [("leeds",), ("york",)], "reviewers": [(), ()],
                                          "versions": [(), ()], "decided": ["", ""]}),
                       LocalNames.none().rejected)
    lexical = load_or_build_lexical(vocab, tmp_path)
    own = rng.normal(size=(2, 16)).astype(np.float32)
    own /= np.linalg.norm(own, axis=1, keepdims=True)
    local = LocalIndex(names, own, lexical.embed(texts).tocsr(), lexical.embed,
                       np.array([t.lower() for t in texts], dtype=object))
    queries = own[[0, 1, 1]] + 0.01 * rng.normal(size=(3, 16)).astype(np.float32)
    rows = [{"text": "Concept T5, here"}, {"text": "CONCEPT T9 HERE"}, {"text": "concept T9 there"}]
    config = RankConfig(method="encoder", top_k=3, hubness=False)
    exact = NameIndex(vectors, build_faiss_index(vectors), None, True, 0.0)
    ivf = build_faiss_index(vectors, IndexConfig(approximate_above=10, nprobe=1000))
    pooled = NameIndex(vectors, ivf, None, True, 0.0)
    assert pooled.approximate
    found = [rank_hybrid(index, None, vocab, queries, rows, config=config, local=local)
             for index in (exact, pooled)]
    pd.testing.assert_frame_equal(*found)
    top = found[0][found[0]["rank"] == 1]
    assert top["target_code"].tolist()[:2] == ["T200", "T201"]
    assert top["target_code"].iloc[2] != "T201"  # "concept T9 there" is not written as approved
    assert "matched site leeds's approved name 'concept T5 here'" in top["explanation"].iloc[0]


def review_workbook(path, approve: dict, reject: set = ()):
    """A scripted reviewer: approve the (source code → target code) pairs, reject others."""
    book = openpyxl.load_workbook(path)
    sheet = book["candidates"]
    col = {c.value: i for i, c in enumerate(sheet[1])}
    for row in sheet.iter_rows(min_row=2):
        key = (str(row[col["source_code"]].value), str(row[col["target_code"]].value))
        decision = ("approved" if approve.get(key[0]) == key[1] else
                    "rejected" if key in reject else None)
        if decision:
            row[col["decision"]].value, row[col["reviewer"]].value = decision, "dr-a"
    out = path.with_name(path.name.replace("codemap", "reviewed"))
    book.save(out)
    return out


def candidates(path) -> pd.DataFrame:
    return pd.read_excel(path, sheet_name="candidates", dtype=str, engine="calamine").fillna("")


def test_an_approval_at_one_site_ranks_first_at_the_next(tmp_path, shared_cache):
    """Map a list, review it, apply into a memory; a differently written list at another site then
    gets the approved concept first, explained; forgetting the approval undoes it."""
    (tmp_path / "leeds.csv").write_text("code,name\nA1,Krea enz.\nA2,Kalium i.S.\n")
    (tmp_path / "york.csv").write_text("code,name\nB1,Krea (enz)\nB2,Natrium i.S.\n")
    common = ["--target", "LOINC", "-k", 10, "--cache-dir", shared_cache, "-q"]
    leeds = tmp_path / "leeds.codemap.xlsx"
    assert invoke("map", tmp_path / "leeds.csv", "-o", leeds, *common).exit_code == 0
    assert "2160-0" in candidates(leeds).query("source_code == 'A1'")["target_code"].tolist()
    reviewed = review_workbook(leeds, {"A1": "2160-0", "A2": "2823-3"}, {("A1", "2157-6")})
    memory = tmp_path / "study.db"
    result = invoke("apply", reviewed, "-o", tmp_path / "leeds.csv.out", "--memory", memory,
                    "--site", "leeds")
    assert result.exit_code == 0, result.output

    def york(name, *more):
        out = tmp_path / name
        result = invoke("map", tmp_path / "york.csv", "-o", out, *common, *more)
        assert result.exit_code == 0, result.output
        frame = candidates(out)
        return frame[(frame["source_code"] == "B1") & (frame["rank"] == "1")].iloc[0]

    before = york("before.xlsx")
    assert before["target_code"] != "2160-0"  # the model alone reads "Krea (enz)" otherwise
    assert york("default.xlsx", "--memory", memory)["target_code"] != "2160-0"  # opt-in
    after = york("after.xlsx", "--memory", memory, "--local-names")
    assert after["target_code"] == "2160-0"
    assert "matched site leeds's approved name 'Krea enz.'" in after["explanation"]
    listed = invoke("memory", "list", memory)
    assert "'Krea enz.' → 2160-0" in listed.output and "rejected" in listed.output
    assert invoke("memory", "forget", memory, "--text", "krea ENZ.", "--code", "2160-0").exit_code == 0
    forgotten = york("forgotten.xlsx", "--memory", memory, "--local-names")
    assert forgotten["target_code"] == before["target_code"]


def test_an_empty_memory_changes_nothing(tmp_path, shared_cache):
    (tmp_path / "list.csv").write_text("code,name\nB1,Krea (enz)\nB2,Natrium i.S.\nB3,Hb\n")
    memory = tmp_path / "empty.db"
    MappingMemory(memory).__exit__()
    frames = []
    for name, more in (("plain.csv", []), ("memory.csv", ["--memory", memory, "--local-names"])):
        result = invoke("map", tmp_path / "list.csv", "-o", tmp_path / name, "--target", "LOINC",
                        "--cache-dir", shared_cache, "-q", *more)
        assert result.exit_code == 0, result.output
        frames.append(pd.read_csv(tmp_path / name, dtype=str))
    plain, with_memory = frames
    assert with_memory["memory"].isna().all()  # nothing pre-filled
    pd.testing.assert_frame_equal(plain, with_memory[plain.columns])
