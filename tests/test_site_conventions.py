"""A site's lab conventions learned from its approvals (codemap.domains.lab.conventions), and
`map --memory` ranking the site's next list with them
(benchmarks/results/site-conventions/RULE.md)."""
import openpyxl
import pandas as pd
from typer.testing import CliRunner

from codemap.cli import app
from codemap.domains.lab.conventions import LEAST, learn
from codemap.review.memory import MappingMemory
from codemap.vocab.vocabulary import builtin_loinc

runner = CliRunner()

# (text as the site wrote it, the code its reviewer approved), real built-in LOINC codes.
MOLAR = [("Kreatinine", "14682-9"), ("Calcium", "2000-8"), ("Glucose", "14749-6"),
         ("Bilirubine", "14631-6"), ("Cholesterol", "14647-2"), ("Triglyceride", "14927-8")]
METHODLESS = [("Thrombocyten", "26515-7"), ("Leukocyten", "26464-8"), ("Lymfocyten", "26474-7"),
              ("Trombo's", "26515-7"), ("Leuco's", "26464-8")]


def test_a_site_approving_molar_and_methodless_codes_is_read_so():
    concepts = builtin_loinc().concepts
    learned = learn(MOLAR + METHODLESS, concepts)
    assert learned.settings() == {"unit_system": "si", "methods": "none"}
    assert "unit system si (6 of 6" in learned.said and "methods none (5 of 5" in learned.said


def test_too_few_votes_or_no_majority_leave_the_shipped_settings():
    concepts = builtin_loinc().concepts
    assert learn(MOLAR[:LEAST - 1], concepts).settings() == {}
    mass = [("Creatinine", "2160-0"), ("Calcium", "17861-6"), ("Glucose", "2345-7")]
    tied = learn(MOLAR[:3] + mass, concepts)
    assert "unit_system" not in tied.settings() and "left as shipped (3 of 6" in tied.said


def test_an_approval_for_a_text_that_states_its_method_is_no_vote():
    """"Platelets auto" chose its code by what it says, not by the site's habit."""
    concepts = builtin_loinc().concepts
    stated = [("Platelets automated count", "777-3")] * 5
    assert learn(stated, concepts).settings() == {}
    habit = [("Platelets", "777-3"), ("WBC", "6690-2"), ("Lymphs", "731-0"), ("Plt", "777-3"),
             ("Leukocytes", "6690-2")]
    assert learn(habit, concepts).settings() == {"methods": "usual"}


def sheet(path, name: str) -> pd.DataFrame:
    rows = list(openpyxl.load_workbook(path)[name].values)
    return pd.DataFrame(rows[1:], columns=rows[0])


def test_map_with_a_memory_ranks_the_sites_next_list_by_its_conventions(tmp_path, shared_cache):
    memory = tmp_path / "study.db"
    reviewed = pd.DataFrame([{"source_code": str(i), "source_text": text, "target_code": code,
                              "target_name": code, "decision": "approved", "equivalence": "",
                              "reviewer": "dr-a", "comment": "", "automatic": False}
                             for i, (text, code) in enumerate(MOLAR + METHODLESS)])
    with MappingMemory(memory) as stored:
        stored.store(reviewed, builtin_loinc(), "amc.reviewed.xlsx")
    (tmp_path / "amc.csv").write_text("code,name\nN1,Ureum\nN2,Natrium\nN3,Kalium\n"
                                      "N4,Creatinine\nN5,Platelets\n", encoding="utf-8")

    def mapped(name, *more):
        out = tmp_path / name
        result = runner.invoke(app, ["map", str(tmp_path / "amc.csv"), "--target", "LOINC", "-o",
                                     str(out), "--cache-dir", str(shared_cache), "-q", *more])
        assert result.exit_code == 0, result.output
        frame = sheet(out, "candidates")
        run = dict(sheet(out, "run").iloc[:, :2].values)
        return frame[frame["rank"] == 1].set_index("source_code")["target_code"].to_dict(), run

    plain, run = mapped("plain.xlsx")
    assert (plain["N4"], plain["N5"], run["unit_system"], run["methods"]) == (
        "2160-0", "777-3", "us", "usual")
    learned, run = mapped("learned.xlsx", "--memory", str(memory))
    said = runner.invoke(app, ["map", str(tmp_path / "amc.csv"), "--target", "LOINC", "-o",
                               str(tmp_path / "said.csv"), "--cache-dir", str(shared_cache),
                               "--memory", str(memory)]).output
    assert "conventions: from site amc's 11 approvals" in said and "--methods none)" in said
    assert (learned["N4"], learned["N5"], run["unit_system"], run["methods"]) == (
        "14682-9", "26515-7", "si", "none")
    assert run["conventions"].startswith("from site amc's 11 approvals: unit system si")
    stated, run = mapped("stated.xlsx", "--memory", str(memory), "--unit-system", "us")
    assert (stated["N4"], stated["N5"], run["unit_system"], run["methods"]) == (
        "2160-0", "26515-7", "us", "none")
    assert "(stated: unit_system as given)" in run["conventions"]
