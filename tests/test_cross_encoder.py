"""The second stage's cross-encoder: a few training steps on real base weights, an exact resume
from the checkpoint, and the shipped folder scored at run time as the trained model scores."""
import json

import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from codemap.rerank.pair_model import PairModel, row_side  # noqa: E402
from codemap.train.cross_encoder import (CrossEncoderConfig, _resume, build_model,  # noqa: E402
                                         tokens, train)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """A first-stage candidates file as train.pairs writes it: 16 rows, 9 candidates each."""
    folder = tmp_path_factory.mktemp("pairs")
    names = ["Potassium [Moles/volume] in Serum or Plasma", "Sodium [Moles/volume] in Serum or Plasma",
             "Glucose [Mass/volume] in Serum or Plasma", "Hemoglobin [Mass/volume] in Blood",
             "Creatinine [Mass/volume] in Serum or Plasma", "Platelets [#/volume] in Blood",
             "Chloride [Moles/volume] in Serum or Plasma", "Calcium [Mass/volume] in Serum or Plasma",
             "Albumin [Mass/volume] in Serum or Plasma"]
    texts = ["K", "Na", "Glu", "Hb", "Crea", "Plt", "Cl", "Ca"]
    records = []
    for row in range(16):
        gold = row % len(texts)
        for rank, name in enumerate(names, start=1):
            records.append({"row": row, "text": texts[gold] + ("" if row < 8 else " serum"),
                            "unit": "mmol/L" if row % 2 else "", "specimen": "", "rank": rank,
                            "target_code": str(rank), "target_name": name,
                            "label": int(rank - 1 == gold)})
    pd.DataFrame(records).to_parquet(folder / "lab.parquet", index=False)
    return folder


CONFIG = dict(layers=2, groups=4, negatives=3, steps=2, save_every=1, eval_every=2, eval_rows=2,
              held_out_share=0.2, warmup=1)


def test_training_saves_resumes_and_ships_what_runs(pairs, tmp_path):
    run = tmp_path / "run"
    first = train(run, pairs, CrossEncoderConfig(**CONFIG))
    assert first["step"] == 2 and 0.0 <= first["held_out_acc1"] <= 1.0
    state = torch.load(run / "checkpoint.pt", weights_only=True)
    assert state["step"] == 2
    # The same command with more steps goes on from the checkpoint, not from the start.
    more = train(run, pairs, CrossEncoderConfig(**{**CONFIG, "steps": 3}))
    assert more["step"] == 3
    log = [json.loads(line) for line in (run / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [2, 3]
    # What ships scores as the trained model does.
    config = CrossEncoderConfig(**{**CONFIG, "steps": 3})
    model, tokenizer, _ = build_model(config)
    _resume(run, model)
    model.eval()
    sides = [row_side("K", "mmol/L"), row_side("Natrium i.S.")]
    names = ["Potassium [Moles/volume] in Serum or Plasma", "Sodium [Moles/volume] in Serum or Plasma"]
    with torch.no_grad():
        expected = model(**tokens(tokenizer, sides, names, config.max_length)).numpy()
    shipped = PairModel.load(run / "model")
    assert shipped.score(sides, names) == pytest.approx(expected, abs=2e-2)  # fp16 adapter
