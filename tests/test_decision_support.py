"""Decision support with the real default model on the real dev sets: calibrated confidence,
no_match suggestions, --auto-accept pre-approval, and what `apply` exports from them."""
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from .conftest import DATA, REPO
from codemap.decide.calibrate import expected_calibration_error, precision_curve
from codemap.decide.confidence import FEATURES, candidate_features
from codemap.cli import app
from codemap.decide import Calibrator, shipped_calibrators
from codemap.decide import AUTO_ACCEPT_BY, SUGGESTIONS

DRUG_TARGET = REPO / "codemap" / "data" / "drugs" / "drug_targets.tsv"
DRUG_DEV = DATA / "ohdsi-mimic-drugs" / "dev_local_drug_to_concept.tsv"
GERMAN_LABELS = REPO / "benchmarks" / "data" / "german_lab_labels_dev.tsv"
runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_ece_and_precision_curve_by_hand():
    assert expected_calibration_error(np.array([0.25] * 4), np.array([1.0, 0, 0, 0])) == 0.0
    assert expected_calibration_error(np.array([0.95, 0.95]), np.array([0.0, 0.0])) == pytest.approx(0.95)
    curve = precision_curve(np.array([0.9, 0.8, 0.8, 0.1]), np.array([1.0, 1.0, 0.0, 0.0]))
    assert curve == ((0.9, 1.0, 1), (0.8, 0.666667, 3), (0.1, 0.5, 4))  # ties share a threshold


def test_a_threshold_keeps_its_precision_with_a_margin():
    """Ten right rows prove no 95 % (their lower bound is 0.79); one early wrong row no longer
    blocks every threshold below it; a point precision of 0.95 on 40 rows is not enough."""
    from codemap.rank.candidates import precision_lower_bound, threshold_at

    assert precision_lower_bound(1.0, 10) == pytest.approx(0.787, abs=1e-3)
    ten = tuple((1 - k / 100, 1.0, k) for k in range(1, 11))
    assert threshold_at(ten, 0.95) is None
    # 1 wrong at the top, then right rows: 1 wrong in 200 is 0.995 (lower bound 0.976)
    early_error = ((0.99, 0.0, 1),) + tuple((0.98 - k / 1000, (k - 1) / k, k) for k in range(2, 201))
    assert threshold_at(early_error, 0.95) == pytest.approx(0.98 - 200 / 1000)
    assert threshold_at(((0.9, 0.95, 40),), 0.95) is None


def test_a_missing_drug_row_lacks_the_drug_not_one_level_of_it():
    """`codemap calibrate` hides a missing drug row's gold with every concept of the same
    ingredients (its brands, other strengths, its component), as a drug vocabulary lacks a drug
    altogether; a lab target hides the gold codes alone."""
    from codemap.decide.calibrate import hidden_together
    from codemap.domains import prepare_target
    from codemap.vocab import load_target

    drugs = prepare_target(load_target(str(DRUG_TARGET)))
    names = drugs.vocab.concepts.set_index("code")["name"]
    gold = names.index[names.str.startswith("aripiprazole 5 MG Oral Tablet")][0]
    hidden = hidden_together(drugs, [{gold}, set()])
    assert gold in hidden[0] and len(hidden[0]) > 1 and hidden[1] == set()
    assert all("aripiprazole" in names[c].lower() or "abilify" in names[c].lower() for c in hidden[0])
    labs = prepare_target(load_target("LOINC"))
    assert hidden_together(labs, [{"2345-7"}]) == [{"2345-7"}]


def test_unconfirmed_evidence_is_read_apart_from_agreement_and_contradiction():
    # Reasons as the drug scorers write them; a reason without a mark adds nothing to it.
    found = pd.DataFrame({
        "query": [0, 0, 0], "rank": [1, 2, 3], "score": [1.2, 1.1, 0.6],
        "explanation": [
            "name: encoder 0.8; ingredients leflunomide ✔ (+0.30); strength 10 MG = source 10 mg ✔ "
            "(+0.20); form Oral Tablet, source states none ~ (-0.03); brand Arava, source names none ~ (-0.03)",
            "name: encoder 0.8; ingredients 1/2 of a, b ~ (+0.10); strength 20 MG ≠ source 10 mg ✘ (-0.30)",
            "name: encoder 0.6; unit mg/dL fits MCnc (+0.05); common test rank 12 (+0.02)"]})
    x = dict(zip(FEATURES, candidate_features(found).T))
    assert x["evidence_unconfirmed"].tolist() == pytest.approx([-0.06, 0.10, 0.0])
    assert x["evidence_for"].tolist() == pytest.approx([0.50, 0.10, 0.07])
    assert x["evidence_against"].tolist() == pytest.approx([-0.06, -0.30, 0.0])


def test_missing_queries_have_their_gold_hidden_before_ranking(shared_cache):
    """The target lacks a missing query's gold concepts: the ranking never sees them, so no
    sibling borrows their name score (as one did when they were removed after ranking)."""
    from codemap.config import EvalConfig
    from codemap.decide.calibrate import CalibrateConfig, dev_list, missing_queries
    from codemap.evaluate.gold import gold_queries

    assert missing_queries(8, 0.25, 0).sum() == 2
    gold = EvalConfig(gold=DATA / "mimic_labs_gold.tsv", target="LOINC", gold_col="loinc_code",
                      progress=False, cache_dir=shared_cache)
    dev = dev_list(gold, CalibrateConfig((gold,), Path(), missing_share=0.5, seed=0)).dev
    missing, gold_codes = dev.missing, gold_queries(gold).gold
    assert missing.sum() == round(0.5 * dev.n_queries)
    asked = dev.found["query"].to_numpy()
    assert dev.labels[missing[asked]].sum() == 0 and dev.labels[~missing[asked]].sum() > 0
    borrowed = dev.found["explanation"].str.extract(r"of ([\w-]+), a variant")[0]
    assert not any(code in gold_codes[q] for q, code in zip(asked, borrowed) if missing[q])


def test_calibrate_labs_cli_and_shipped_calibration_still_fits(tmp_path, shared_cache):
    out, png = tmp_path / "calib.json", tmp_path / "rel.png"
    # The shipped lab calibration's command: two dev lists pooled, each weighing the same.
    # The MIMIC gold file less the fresh part's labels, so the fresh figures stay out of sample.
    result = invoke("calibrate", REPO / "benchmarks" / "data" / "mimic_labs_fluid_dev.tsv",
                    GERMAN_LABELS, "--target", "LOINC",
                    "--gold-col", "loinc_code", "-o", out, "--plot", png, "--cache-dir", shared_cache)
    assert result.exit_code == 0, result.output
    assert "ECE" in result.output and png.read_bytes()[:4] == b"\x89PNG"
    assert "german_lab_labels_dev.tsv: AUROC" in result.output
    fitted = Calibrator.load(out)
    m = fitted.metrics
    assert (m["queries"], m["missing_queries"]) == (106 + 98, 32 + 29)
    assert set(m["per_list_auroc_top1"]) == {"mimic_labs_fluid_dev.tsv", "german_lab_labels_dev.tsv"}
    # Measured leaving one list out (each list is a fold): a kind of list it was not fitted on.
    assert m["ece_all"] < 0.05 and m["ece_top1"] < 0.2
    # The shipped lab calibration must describe today's ranking: refit it (README command)
    # when the ranking or its evidence changes.
    shipped = {c.domain: c for c in shipped_calibrators()}
    assert shipped["lab"].ranking == fitted.ranking and shipped["lab"].model == fitted.model
    assert np.allclose(shipped["lab"].coef, fitted.coef, atol=0.05)


def test_calibrate_user_errors_exit_2(tmp_path, shared_cache):
    result = invoke("calibrate", DATA / "mimic_labs_gold.tsv", "--target", "LOINC", "--gold-col",
                    "nope", "-o", tmp_path / "c.json")
    assert result.exit_code == 2 and "nope" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "something else"}))
    result = invoke("map", DATA / "mimic_labs_gold.tsv", "--target", "LOINC", "--calibration", bad,
                    "-o", tmp_path / "o.xlsx", "-q", "--cache-dir", shared_cache)
    assert result.exit_code == 2 and "not a codemap calibration" in result.output


def test_a_calibration_fitted_while_default_named_another_model_is_refused(tmp_path, shared_cache):
    from codemap.embed import resolve_model

    trained = resolve_model("default")  # coder-multilingual: the key carries its adapter's hash
    assert trained.key().startswith("default@") and resolve_model("default-base").key() == "default-base"
    assert {c.model for c in shipped_calibrators()} == {trained.key()}
    old = json.loads((REPO / "codemap/data/calibration/default-lab.json").read_text())
    old["model"] = "default"  # as written before `default` named the trained model
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(old))
    result = invoke("map", DATA / "mimic_labs_gold.tsv", "--target", "LOINC", "--calibration", stale,
                    "-o", tmp_path / "o.xlsx", "-q", "--cache-dir", shared_cache)
    assert result.exit_code == 2 and "fitted for model 'default'" in result.output
    assert "codemap calibrate --model default`" in result.output and not (tmp_path / "o.xlsx").exists()


def test_auto_accept_without_calibration_exits_2(tmp_path):
    vocab = tmp_path / "v.csv"
    vocab.write_text("code,name\nA,sodium\nB,potassium\n", encoding="utf-8")
    source = tmp_path / "s.csv"
    source.write_text("code,text\n1,Na\n", encoding="utf-8")
    result = invoke("map", source, "--target", vocab, "--auto-accept", 0.9, "-o", tmp_path / "o.csv")
    assert result.exit_code == 2 and "calibrat" in result.output


@pytest.fixture(scope="module")
def drugs_mapped(tmp_path_factory, shared_cache):
    """200 dev drug strings mapped with the shipped drug calibration and --auto-accept 0.9."""
    folder = tmp_path_factory.mktemp("decide")
    lines = DRUG_DEV.read_text(encoding="utf-8").splitlines()
    source = folder / "drugs.tsv"
    source.write_text("\n".join(lines[:201]) + "\n", encoding="utf-8")
    out = folder / "drugs.codemap.xlsx"
    result = invoke("map", source, "--target", DRUG_TARGET, "--text-col", "local_drug_string",
                    "--code-col", "local_drug_string", "--auto-accept", 0.9, "-o", out,
                    "--cache-dir", shared_cache)
    assert result.exit_code == 0, result.output
    frame = pd.read_excel(out, sheet_name="candidates", engine="calamine", dtype=str, keep_default_na=False)
    run = pd.read_excel(out, sheet_name="run", engine="calamine", dtype=str).set_index("setting")["value"]
    return folder, out, frame, run, result.output


def test_map_writes_confidence_tiers_and_pre_approvals(drugs_mapped):
    _, _, frame, run, output = drugs_mapped
    assert "shipped drug calibration" in run["confidence"]
    assert "review tiers (sources)" in output
    confidence = frame["confidence"].astype(float)
    assert confidence.between(0, 1).all()
    top = frame[frame["rank"] == "1"]
    assert set(top["suggestion"]) <= set(SUGGESTIONS) and (top["suggestion"] == "pre-approve").any()
    # Sorted by need of review: tier order, and the workbook groups each source together.
    tier = top["suggestion"].map(SUGGESTIONS.index).to_numpy()
    assert (np.diff(tier) >= 0).all()
    approved = frame[frame["decision"] == "approved"]
    assert (approved["rank"] == "1").all() and (approved["suggestion"] == "pre-approve").all()
    assert approved["reviewer"].str.startswith(AUTO_ACCEPT_BY).all()
    # The dev curve promised ~0.9 top-1 precision there; check against the gold codes.
    dev = pd.read_csv(DRUG_DEV, sep="\t", dtype=str)
    gold = dict(zip(dev["local_drug_string"].str.strip(), dev["target_concept_id"]))
    right = np.mean([gold[s] == t for s, t in zip(approved["source_code"], approved["target_code"])])
    assert right >= 0.8, right
    assert top.loc[top["suggestion"] == "no_match", "confidence"].astype(float).max() < \
        float(run["no_match_below"])


def test_apply_exports_pre_approvals_and_no_match(drugs_mapped):
    folder, out, frame, _, _ = drugs_mapped
    sssom_path = folder / "drugs.sssom.tsv"
    result = invoke("apply", out, "-o", sssom_path, "--format", "sssom")
    assert result.exit_code == 0, result.output
    text = sssom_path.read_text(encoding="utf-8")
    body = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    sssom = pd.read_csv(io.StringIO(body), sep="\t", dtype=str, keep_default_na=False)
    mapped = sssom[sssom["object_id"] != "sssom:NoTermFound"]
    assert (mapped["mapping_justification"] == "semapv:SemanticSimilarityThresholdMatching").all()
    assert mapped["confidence"].astype(float).between(0, 1).all()  # calibrated, not the raw score
    n_no_match = frame.drop_duplicates("source_row")["suggestion"].eq("no_match").sum()
    assert (sssom["object_id"] == "sssom:NoTermFound").sum() == n_no_match > 0
    csv_path = folder / "drugs.csv"
    assert invoke("apply", out, "-o", csv_path).exit_code == 0
    plain = pd.read_csv(csv_path, dtype=str, keep_default_na=False)
    assert (plain["automatic"] == "True").all() and len(plain) == len(mapped)


def test_prefix_hierarchy_for_icd10_tables_without_relations():
    from codemap.vocab.hierarchy import nearest_broader, parent_map
    from codemap.vocab import Vocabulary

    codes = ["E11", "E11.6", "E11.65", "E11.64", "E11.9", "E10"]
    concepts = pd.DataFrame({"code": codes, "name": codes})
    vocab = Vocabulary("ICD10CM-file", "x", concepts, concepts.assign(name_type="preferred", lang="en"))
    parents = parent_map(vocab)
    assert parents["E11.65"] == ["E11.6"] and parents["E11.9"] == ["E11"] and "E10" not in parents
    assert nearest_broader(["E11.65", "E11.64", "E10"], parents) == ("E11.6", ["E11.65", "E11.64"])
    assert nearest_broader(["E11.9", "E10"], parents) == ("E11", ["E11.9"])  # the top's parent


def test_uphill_proposes_broader_concept_and_sssom_broad_match(tmp_path, shared_cache):
    from codemap.review import read_reviewed_workbook
    from codemap.vocab import ImportOptions, VocabStore
    from codemap.write import write_candidates

    store = tmp_path / "cache" / "store"  # the default store here, so `apply` finds it too
    VocabStore(store).import_files("icd10cm", DATA / "store" / "icd10cm" / "icd10cm_tabular_slice.xml",
                                   ImportOptions())
    source = tmp_path / "dx.csv"
    source.write_text("code,text\nd1,Cholera due to Vibrio cholerae O139 Bengal\n"
                      "d4,Shigella infection due to Shigella sonnei\n", encoding="utf-8")
    out = tmp_path / "dx.xlsx"
    # No calibration is fitted for ICD-10-CM: the lab one stands in, for the ranking it was
    # fitted on (the lab targets' weight 0.7; the trained model's own for ICD would be 1.0)
    # less the lab evidence, which an ICD target does not get.
    lab = json.loads((REPO / "codemap" / "data" / "calibration" / "default-lab.json").read_text())
    stand_in = tmp_path / "stand-in.json"
    stand_in.write_text(json.dumps({**lab, "ranking": re.sub(r"evidence=[^/]+", "evidence=none",
                                                             lab["ranking"])}))
    result = invoke("map", source, "--target", "ICD10CM", "--store", store, "--calibration",
                    stand_in, "-o", out, "--cache-dir", shared_cache, "--encoder-weight", "0.7")
    assert result.exit_code == 0, result.output
    frame, run = read_reviewed_workbook(out)
    broader = frame[frame["equivalence"] == "wider"].set_index("source_code")
    assert broader.at["d1", "target_code"] == "A00" and broader.at["d4", "target_code"] == "A03"
    assert broader["explanation"].str.startswith("broader: is-a ancestor of").all()
    assert int(run["broader_proposals"]) == 2
    approve = (frame["equivalence"] == "wider") & (frame["source_code"] == "d1")
    frame.loc[approve, "decision"] = "approved"
    write_candidates(frame.drop(columns=["sheet_row"]), out, run)
    sssom_path = tmp_path / "dx.sssom.tsv"
    result = invoke("apply", out, "-o", sssom_path, "--format", "sssom")
    assert result.exit_code == 0, result.output
    body = [l.split("\t") for l in sssom_path.read_text(encoding="utf-8").splitlines()
            if not l.startswith("#")]
    rows = [dict(zip(body[0], r)) for r in body[1:]]
    assert [(r["object_id"], r["predicate_id"]) for r in rows if r["subject_id"] == "local:d1"] == \
        [("ICD10CM:A00", "skos:broadMatch")]


def test_llm_selector_plug_in_asks_logs_and_marks(tmp_path, shared_cache):
    """Mechanics only: a stand-in OpenAI-compatible endpoint that always answers "2"."""
    import http.server
    import threading

    prompts = []

    class Endpoint(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompts.append(body["messages"][-1]["content"])
            reply = json.dumps({"choices": [{"message": {"content": "2"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    source = tmp_path / "labs.csv"
    source.write_text("code,text\n1,Sodium serum\n2,Potassium\n3,Bili\n", encoding="utf-8")
    out = tmp_path / "labs.csv.out.csv"
    try:
        result = invoke("map", source, "--target", "LOINC", "-o", out, "--cache-dir", shared_cache,
                        "--llm-url", f"http://127.0.0.1:{server.server_port}/v1", "-q")
    finally:
        server.shutdown()
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    # Only rows whose first confidence is below LLMConfig.below (0.9) are put to the model;
    # which rows those are moves with each calibration refit, so the test reads them.
    tops = frame[frame["rank"] == "1"].set_index("source_text")["confidence"].astype(float)
    asked = sorted(tops[tops < 0.9].index)
    assert asked, "no row below 0.9: the test asks nothing"
    assert sorted(p.splitlines()[0] for p in prompts) == [f"Source term: {t}" for t in asked]
    assert set(frame.loc[frame["llm"] == "chosen", "rank"]) == {"2"}
    assert (frame["llm"] == "chosen").sum() == len(asked)
    log = [json.loads(l) for l in (tmp_path / "labs.csv.out.llm.jsonl").read_text().splitlines()]
    assert [entry["choice"] for entry in log] == [2] * len(asked) and log[0]["response"] == "2"
    result = invoke("map", source, "--target", "LOINC", "-o", out, "--cache-dir", shared_cache,
                    "--llm-url", "http://127.0.0.1:9/v1", "-q")
    assert result.exit_code == 2 and "cannot reach" in result.output


def test_streamed_blocks_give_the_same_decisions_and_tier_counts(tmp_path, shared_cache):
    """Confidence, suggestion and pre-approval are made per block and kept in the parts: 7-row
    blocks give the single block's columns, and the summary adds the tiers up over the parts."""
    lines = DRUG_DEV.read_text(encoding="utf-8").splitlines()
    source = tmp_path / "drugs.tsv"
    source.write_text("\n".join(lines[:61]) + "\n", encoding="utf-8")
    common = ["--target", DRUG_TARGET, "--text-col", "local_drug_string", "--code-col",
              "local_drug_string", "--auto-accept", 0.9, "--cache-dir", shared_cache,
              # Set, not the calibration's own: every tier must occur whatever a refit moves.
              "--no-match-below", 0.4]
    frames, outputs = {}, {}
    for rows, name in ((1000, "one.csv"), (7, "blocks.csv"), (7, "blocks.xlsx")):
        out = tmp_path / name
        result = invoke("map", source, *common, "--block-rows", rows, "-o", out)
        assert result.exit_code == 0, result.output
        assert not (tmp_path / f".{out.stem}.parts").exists()
        frames[name] = (pd.read_csv(out, dtype=str, keep_default_na=False) if name.endswith(".csv")
                        else pd.read_excel(out, sheet_name="candidates", engine="calamine",
                                           dtype=str, keep_default_na=False))
        outputs[name] = " ".join(result.output.split())
    one, blocks = frames["one.csv"], frames["blocks.csv"]
    columns = ["source_row", "rank", "target_code", "confidence", "suggestion", "decision", "reviewer"]
    pd.testing.assert_frame_equal(one[columns], blocks[columns])
    tops = one[one["rank"] == "1"]
    counts = tops["suggestion"].value_counts()
    assert set(counts.index) == set(SUGGESTIONS) and len(tops) == 60  # every tier is exercised
    line = "review tiers (sources): " + ", ".join(f"{s} {counts[s]}" for s in SUGGESTIONS)
    assert line in outputs["one.csv"] and line in outputs["blocks.csv"], outputs["blocks.csv"]
    # The workbook holds the same rows, sorted by need of review (CSV keeps the source order).
    workbook = frames["blocks.xlsx"]

    def in_source_order(frame):
        out = frame[columns].astype({"confidence": float}).replace("", None)
        out["rank"] = pd.to_numeric(out["rank"]).astype("Int64")
        out["source_row"] = out["source_row"].astype(int)
        return out.sort_values(["source_row", "rank", "target_code"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(in_source_order(workbook), in_source_order(blocks))
    tier = workbook.loc[workbook["rank"] == "1", "suggestion"].map(SUGGESTIONS.index).to_numpy()
    assert (np.diff(tier) >= 0).all() and (np.diff(blocks["source_row"].astype(int)) >= 0).all()


def test_decision_settings_and_calibration_content_are_in_the_parts_key(tmp_path, shared_cache):
    """A streamed run reuses finished parts only under the same decision settings: parts hold
    confidence, suggestions and pre-approvals made with them."""
    from dataclasses import replace

    from codemap.config import MapConfig
    from codemap.engines.local import Mapper, _run_key

    vocab, source = tmp_path / "v.csv", tmp_path / "s.csv"
    vocab.write_text("code,name\nA,sodium\nB,potassium\n", encoding="utf-8")
    source.write_text("code,text\n1,Na\n", encoding="utf-8")
    calibration = tmp_path / "c.json"
    calibration.write_text((REPO / "codemap" / "data" / "calibration" / "default-lab.json")
                           .read_text(encoding="utf-8"), encoding="utf-8")
    config = MapConfig(source=source, target=str(vocab), cache_dir=shared_cache, progress=False,
                       calibration=calibration)
    mapper = Mapper.load(replace(config, calibration=None))
    key = _run_key(config, mapper, 7)
    assert key == _run_key(config, mapper, 7)
    for changed in (replace(config, auto_accept=0.95), replace(config, broader_below=0.0),
                    replace(config, no_match_below=0.3), replace(config, calibration=None)):
        assert _run_key(changed, mapper, 7) != key
    data = json.loads(calibration.read_text(encoding="utf-8"))
    calibration.write_text(json.dumps({**data, "intercept": data["intercept"] + 1}), encoding="utf-8")
    assert _run_key(config, mapper, 7) != key  # same path, refitted content
