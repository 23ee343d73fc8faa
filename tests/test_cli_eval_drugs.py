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


def test_eval_drugs_unknown_gold_column_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["eval", str(DATA / "ohdsi-mimic-drugs" /
                                                  "dev_local_drug_to_concept.tsv"),
                                      "--target", str(TARGET), "--gold-col", "nope", "--quiet"])
    assert result.exit_code == 2
