"""int8 as the CPU default, decided by accuracy (#44): the default ranking's acc@1 on every dev
set kind with the ONNX fp32 export (`--backend auto`) and with the int8 one (`--backend int8`),
side by side in one run, with encoder-alone and lexical rows for reference.

Rule, written before the run: int8 becomes the CPU default if on every dev set its default
acc@1 is within 0.3 points of fp32's (the issue's bar); otherwise fp32 stays and the figures say
by how much int8 misses. The fresh parts are not read.

    python benchmarks/int8/int8_accuracy.py OUT.json [SET,SET…]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: sets, usage

import sets  # noqa: E402
from usage import positional  # noqa: E402
from codemap.config import EncoderConfig, EvalConfig  # noqa: E402
from codemap.evaluate.gold import DEFAULT_METHOD, eval_methods, gold_queries  # noqa: E402
from codemap.evaluate.metrics import gold_ranks, score_ranks  # noqa: E402

ARGS = positional(__doc__, 1)
BAR = 0.003  # acc@1, as a share


def measure(name: str, backend: str) -> dict:
    gold, target, gold_col, text_cols = sets.SETS[name]
    clock = time.perf_counter()
    g = gold_queries(EvalConfig(gold=gold, target=target, gold_col=gold_col, text_cols=text_cols,
                                progress=False, encoder=EncoderConfig(backend=backend)))
    drugs = g.kind == "drug"
    methods = eval_methods(g.base, drugs=drugs)
    out = {"variant": g.encoder.variant, "queries": len(g.gold)}
    for method in ("encoder", "lexical", DEFAULT_METHOD[drugs]):
        out[method if method in ("encoder", "lexical") else "default"] = round(
            score_ranks(gold_ranks(g.rank(methods[method]), g.gold)).acc[1], 4)
    out["seconds"] = round(time.perf_counter() - clock, 1)
    return out


def main(out: Path, names: list[str]) -> None:
    results = {}
    for name in names:
        results[name] = {backend: measure(name, backend) for backend in ("auto", "int8")}
        fp32, int8 = results[name]["auto"]["default"], results[name]["int8"]["default"]
        results[name]["within_bar"] = abs(int8 - fp32) <= BAR + 1e-9
        print(name, json.dumps(results[name]), flush=True)
        out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    adopted = all(r["within_bar"] for r in results.values())
    print(f"int8 as the CPU default: {'adopted' if adopted else 'not adopted'} "
          f"(every dev set within {BAR * 100:.1f} points of fp32: {adopted})")


if __name__ == "__main__":
    main(Path(ARGS[0]), ARGS[1].split(",") if len(ARGS) > 1 else list(sets.SETS))
