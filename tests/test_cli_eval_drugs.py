"""`codemap eval` on the drug dev set: the drug evidence is reported beside the encoder, lexical and plain hybrid."""
from typer.testing import CliRunner

from .conftest import DATA, REPO
from codemap.cli import app

TARGET = REPO / "codemap" / "data" / "drugs" / "drug_targets.tsv"


def test_eval_drugs_reports_drug_aware_method(tmp_path, shared_cache):
    gold = tmp_path / "gold.tsv"
    lines = (DATA / "ohdsi-mimic-drugs" / "dev_local_drug_to_concept.tsv").read_text(
        encoding="utf-8").splitlines()
    gold.write_text("\n".join(lines[:61]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["eval", str(gold), "--target", str(TARGET), "--gold-col",
                                      "target_concept_id", "--text-col", "local_drug_string",
                                      "--cache-dir", str(shared_cache), "--quiet"])
    assert result.exit_code == 0, result.output
    for method in ("encoder", "lexical", "hybrid, no evidence", "hybrid + drug evidence"):
        assert method in result.output
    # What map would suggest, read against the gold: the shipped drug calibration pre-approves
    # some of these rows (issue #52 counts the share and its precision).
    said = next(line for line in result.output.splitlines() if "suggested pre-approve" in line)
    share = float(said.split("asked): ")[1].split("%")[0])
    assert 0 < share <= 100 and "no_match" in said


def test_eval_drugs_unknown_gold_column_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["eval", str(DATA / "ohdsi-mimic-drugs" /
                                                  "dev_local_drug_to_concept.tsv"),
                                      "--target", str(TARGET), "--gold-col", "nope", "--quiet"])
    assert result.exit_code == 2


def test_drug_ranking_accuracy_has_margins(tmp_path, shared_cache):
    """The drug-aware default against the signals alone on the first 120 dev drug strings (the
    full dev set: README results): margins well inside what a regression would cross."""
    from codemap.config import EvalConfig
    from codemap.evaluate import evaluate_gold

    gold = tmp_path / "gold.tsv"
    lines = (REPO / "benchmarks" / "data" / "ohdsi_mimic_drugs_dev.tsv").read_text(
        encoding="utf-8").splitlines()
    gold.write_text("\n".join(lines[:121]) + "\n", encoding="utf-8")
    report = evaluate_gold(EvalConfig(gold=gold, target=str(TARGET), gold_col="target_concept_id",
                                      text_cols=("local_drug_string",), cache_dir=shared_cache,
                                      progress=False, second_stage=False))
    acc1 = {method: scores.acc[1] for method, scores in report["scores"].items()}
    default = acc1[report["default_method"]]  # 0.867 at this commit; encoder 0.792, lexical 0.725
    assert default >= 0.80
    assert default >= acc1["encoder"] + 0.05 and default >= acc1["lexical"] + 0.10
