"""Does the first candidate keep the specimen a row states, in whatever language the row states it?
(issue #52: "a row that states a specimen keeps it in its first candidate in at least 95 % of
cases").

The check lists `stated_specimen_{en,de,es,fr,pt}` name a specimen in every row, so the gold
codes' LOINC system is the stated one. Per set, ranked as `codemap eval` ranks it (the default
ranking, and the encoder and lexical index alone): acc@1, acc@10, and the rows whose first
candidate's system (with its timing: "24 hour Urine") is a gold code's, read from the long
names, not from what the lab domain reads in the row (that is what is being checked).

    python benchmarks/quality/stated_specimen_kept.py OUT.json --sets stated_specimen_de,stated_specimen_es
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from codemap.domains.lab.columns import system_from_name

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/quality: stated_axes
import stated_axes  # noqa: E402

SETS = ("stated_specimen_en", "stated_specimen_de", "stated_specimen_es", "stated_specimen_fr",
        "stated_specimen_pt")


def kept(result: dict, names: dict[str, str]) -> dict:
    """acc@1 per method and the default's first candidates that keep the gold's system."""
    rows = result["rows"]
    keeps = [_system(names, row["codes"][0]) in {_system(names, g) for g in row["gold"]}
             for row in rows if row["codes"]]
    lost = [{"text": row["text"], "first": row["names"][0]} for row, k in zip(rows, keeps) if not k]
    return {"n": result["n"],
            **{m: {"acc@1": got["acc@1"], "acc@10": got["acc@10"]}
               for m, got in result["methods"].items()},
            "specimen_kept": sum(keeps), "specimen_lost": lost}


def _system(names: dict[str, str], code: str) -> str:
    return system_from_name(names.get(code, "")).lower()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("output")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--without-specimen-forms", default="",
                        help="pieces to turn off (stated_axes.specimen_forms_off)")
    args = parser.parse_args()
    if args.without_specimen_forms:
        stated_axes.specimen_forms_off(args.without_specimen_forms.split(","))
    from codemap.vocab import builtin_loinc

    concepts = builtin_loinc().concepts
    names = dict(zip(concepts["code"], concepts["name"]))
    out = {}
    for name in [s for s in args.sets.split(",") if s]:
        out[name] = kept(stated_axes.ranked(name), names)
        summary = {k: v for k, v in out[name].items() if k != "specimen_lost"}
        print(name, json.dumps(summary), flush=True)
    Path(args.output).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")


if __name__ == "__main__":
    main()
