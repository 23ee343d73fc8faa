"""drugs_fresh ranked with 30 % of its rows' gold hidden (the gold alone, or the drug with it),
two drug calibrations applied (OLD, NEW): how many hidden rows each would pre-approve, and the
precision of what it pre-approves (RULE-2.md's risk check; raw: risk-fresh-hidden.json).

    python benchmarks/results/missing-drugs/probe_risk.py OLD.json NEW.json OUT.json
"""
import sys, json, importlib
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # benchmarks/: sets
from sets import FRESH
from codemap.config import EvalConfig, EncoderConfig
from codemap.decide.confidence import Calibrator
C = importlib.import_module("codemap.decide.calibrate")
gold, target, gold_col, cols = FRESH['drugs_fresh']
ev = EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=cols, progress=False,
                encoder=EncoderConfig(model='default'))
together = C.hidden_together
out = {}
for hiding in ('gold alone', 'drug with it'):
    C.hidden_together = together if hiding == 'drug with it' else (lambda target, codes: codes)
    d = C.dev_list(ev, C.CalibrateConfig(golds=(ev,), output='/tmp/x.json', missing_share=0.3))
    found = d.dev.found
    top = (found['rank'] == 1).to_numpy()
    q = found['query'].to_numpy()[top]
    miss = d.dev.missing[q]
    right = d.dev.labels[top].astype(bool)
    for name, path in (('old', sys.argv[1]), ('new', sys.argv[2])):
        cal = Calibrator.load(path)
        conf = cal.predict(found)[top]
        t = cal.threshold_for(0.95)
        picked = conf >= t if t is not None else np.zeros(len(conf), bool)
        row = {'threshold': t, 'pre-approved': int(picked.sum()), 'of rows': len(conf),
               'hidden rows pre-approved': int((picked & miss).sum()), 'hidden rows': int(miss.sum()),
               'precision of pre-approved': round(float(right[picked].mean()), 4) if picked.any() else None,
               'auroc': C.top_auroc(conf, right.astype(int))}
        out[f'{hiding} / {name} calibration'] = row
        print(hiding, name, row)
json.dump(out, open(sys.argv[3], 'w'), indent=1)
