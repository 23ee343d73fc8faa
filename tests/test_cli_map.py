"""`codemap map` end to end: the real CLI, the real default model, real files."""
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from codemap.cli import app

from .conftest import DATA, EXAMPLES

runner = CliRunner()


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """Map the shipped example twice (cold, then warm cache) into a review workbook and a CSV."""
    folder = tmp_path_factory.mktemp("map")
    cache = folder / "cache"
    workbook = folder / "labs.codemap.xlsx"
    cold = runner.invoke(app, ["map", str(EXAMPLES / "labs.xlsx"), "--target", "LOINC",
                               "-o", str(workbook), "--cache-dir", str(cache)])
    table = folder / "labs.csv"
    warm = runner.invoke(app, ["map", str(EXAMPLES / "labs.csv"), "--target", "LOINC",
                               "-o", str(table), "--cache-dir", str(cache), "--top-k", "3"])
    return cold, warm, workbook, table


def test_cold_run_writes_review_workbook(mapped):
    cold, _, workbook, _ = mapped
    assert cold.exit_code == 0, cold.output
    # The built-in LOINC's vectors ship with codemap (codemap.embed.index, "seed"): checked, not built.
    assert "index shipped with codemap" in cold.output
    assert "rows read 150; mapped 149; empty text 1" in cold.output
    assert "subset" in cold.output  # the user is told the built-in LOINC is a subset
    book = openpyxl.load_workbook(workbook)
    frame = pd.DataFrame(book["candidates"].values)
    frame.columns = frame.iloc[0]
    frame = frame.iloc[1:]
    # The example's labelled rows (gold codes in tests/data) whose code is in the subset: the
    # right code is in the top 10 for most (0.94 on the whole dev set), and Potassium is near the top.
    gold = pd.read_csv(DATA / "mimic_labs_gold.tsv", sep="\t", dtype=str).set_index("itemid")["loinc_code"]
    subset = set(pd.read_csv(EXAMPLES.parent / "codemap/data/loinc/LOINC_1.6_Top2000CommonLabResultsUS.csv",
                             dtype=str)["LOINC #"])
    found = frame.groupby("source_code")["target_code"].agg(set)
    scored = [code for code in found.index if gold.get(code) in subset]
    assert len(scored) > 50
    assert sum(gold[code] in found[code] for code in scored) / len(scored) > 0.85
    top3 = frame[frame["rank"] <= 3].groupby("source_text")["target_code"].agg(list)
    assert "2823-3" in top3["Potassium"]  # MIMIC's "Blood" chemistry is serum/plasma
    assert (frame.groupby("source_row")["rank"].count().max()) == 10
    run = {r[0].value: r[1].value for r in book["run"].iter_rows(min_row=2)}
    assert run["target"] == "LOINC" and run["model"] == "default" and run["index_cache"] == "shipped with codemap"


def test_warm_run_reuses_index_and_writes_csv(mapped):
    _, warm, _, table = mapped
    assert warm.exit_code == 0, warm.output
    assert "index hit" in warm.output
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    assert list(frame.columns[:3]) == ["source_row", "source_code", "source_text"]
    assert {"fluid", "category", "rank", "target_code", "target_name", "matched_name", "score",
            "flag"} <= set(frame.columns)
    empty = frame[frame["flag"] == "empty source text"]
    assert len(empty) == 1 and empty.iloc[0]["target_code"] == ""  # reported, not dropped
    assert frame["source_row"].nunique() == 150
    assert frame.groupby("source_row").size().max() == 3


@pytest.mark.parametrize("args, message", [
    (["map", "missing.xlsx", "--target", "LOINC"], "codemap: error: missing.xlsx: file not found"),
    (["map", str(DATA / "labs_de_cp1252.csv"), "--target", "NOPE"],
     "codemap: error: unknown target 'NOPE'"),
    (["map", str(DATA / "labs_de_cp1252.csv"), "--target", "LOINC", "--text-col", "Name"],
     "codemap: error: " + str(DATA / "labs_de_cp1252.csv") + ": no column named 'Name'"),
    (["map", str(DATA / "labs_de_cp1252.csv"), "--target", "LOINC", "--model", "/nonexistent/model"],
     "codemap: error: model '/nonexistent/model' not found"),
])
def test_user_errors_exit_2_without_output(tmp_path, args, message):
    out = tmp_path / "out.xlsx"
    result = runner.invoke(app, args + ["-o", str(out)])
    assert result.exit_code == 2
    assert result.output.startswith(message)
    assert "Traceback" not in result.output
    assert not out.exists()


def test_experiment_switches_sit_in_one_panel_that_says_so():
    """What was measured and not adopted (docs/experiments/) stays out of the stage panels: one
    Experimental panel, each switch saying why it is not adopted (--rerank-top goes with --rerank)."""
    from typer.main import get_command

    from codemap.cli.options import EXPERIMENTAL

    params = get_command(app).commands["map"].params
    experimental = {p.opts[0]: p.help for p in params if p.rich_help_panel == EXPERIMENTAL}
    assert set(experimental) == {"--learned-ranking", "--rerank", "--rerank-top", "--second-stage",
                                 "--local-names"}
    assert all("Not adopted" in help for opt, help in experimental.items() if opt != "--rerank-top")


def test_a_list_that_reports_si_units_takes_the_molar_twin(tmp_path, shared_cache):
    """A row that states no unit cannot tell a mass code from its molar twin; --unit-system si
    says what the lab reports, so the tie goes to the molar one, while a stated unit (a unit
    column, or a unit written in the text) still decides by itself, and the run sheet records
    the setting."""
    source = tmp_path / "labs.csv"
    source.write_text("code,label,unit\n1,Creatinine,\n2,Calcium,\n3,Creatinine,mg/dL\n"
                      "4,Creatinine mg/dL,\n5,Calcium (mmol/L),\n", encoding="utf-8")
    tops = {}
    for system in ("us", "si"):
        out = tmp_path / f"{system}.xlsx"
        result = runner.invoke(app, ["map", str(source), "--target", "LOINC", "-o", str(out),
                                     "--unit-system", system, "--cache-dir", str(shared_cache)])
        assert result.exit_code == 0, result.output
        book = openpyxl.load_workbook(out)
        frame = pd.DataFrame(book["candidates"].values)
        frame.columns = frame.iloc[0]
        frame = frame.iloc[1:]
        tops[system] = frame[frame["rank"] == 1].set_index("source_code")["target_code"].to_dict()
        run = {r[0].value: r[1].value for r in book["run"].iter_rows(min_row=2)}
        assert run["unit_system"] == system
    assert (tops["us"]["1"], tops["us"]["2"]) == ("2160-0", "17861-6")  # mass: what US labs report
    assert (tops["si"]["1"], tops["si"]["2"]) == ("14682-9", "2000-8")  # their molar twins
    assert tops["us"]["3"] == tops["si"]["3"] == "2160-0"  # mg/dL states mass
    # A unit in the text states the property as a unit column does
    # (benchmarks/results/lab-aliases/RULE-text-units.md).
    assert tops["us"]["4"] == tops["si"]["4"] == "2160-0"
    assert tops["us"]["5"] == tops["si"]["5"] == "2000-8"
