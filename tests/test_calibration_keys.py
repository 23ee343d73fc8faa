"""A shipped confidence calibration is fitted on one ranking: its key (model, target kind, ranking
settings and evidence scorers) must be the key `codemap map` computes today, or the calibration
is silently dropped. A change to a domain's scorers or the default settings fails here, naming
the file to refit."""
import pytest

from codemap.config import RankConfig
from codemap.decide.confidence import _shipped_files, Calibrator, ranking_key
from codemap.domains import prepare_target
from codemap.embed.models import resolve_model
from codemap.rank.prepare import ranking_for
from codemap.vocab import builtin_loinc, load_target

TARGETS = {"lab": builtin_loinc, "drug": lambda: load_target("DRUGS")}


@pytest.mark.parametrize("path", _shipped_files(), ids=lambda p: p.name)
def test_each_shipped_calibration_fits_the_ranking_map_computes(path):
    calibration = Calibrator.load(path)
    model = resolve_model(calibration.model.split("@")[0])
    target = prepare_target(TARGETS[calibration.domain]())
    assert target.kind == calibration.domain
    settings = ranking_for(RankConfig(), target.kind, model, "en", "en")
    key = ranking_key(settings, target.scorers(settings))
    assert (model.key(), key) == (calibration.model, calibration.ranking), (
        f"{path.name} was fitted for another ranking than `codemap map` computes now: refit it "
        f"(`codemap calibrate`, docs/decision-support.md) or restore the scorers and settings")
