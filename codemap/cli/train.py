"""`codemap train` and `codemap train-reranker`: the trainers of codemap.train, whose options are
TrainConfig's fields (`--key value`, `--config PRESET`); codemap.train needs torch, so it is
imported when a command runs."""
from __future__ import annotations

import typer

from .command import setup_logging, user_errors

app = typer.Typer()


@app.command("train", context_settings={"allow_extra_args": True,
                                          "ignore_unknown_options": True})
@user_errors
def train_command(ctx: typer.Context) -> None:
    """Train a CODER model on knowledge graphs (options: `--key value` of codemap.train's
    TrainConfig, `--config smoke|gpu` for a preset; needs torch). Multi-GPU: torchrun -m codemap.train.
    `--from-reviews mappings.db` fine-tunes on the reviews in a mapping memory instead and reports
    held-out acc@1/acc@10 before and after (OUT/report.json).

    Example: codemap train --kg loinc --kg hpo --data-dir ../shared/data --steps 200 --out runs/coder
    (or: codemap train --from-reviews mappings.db --base default --out runs/site-tuned --steps 60)
    """
    import json

    from ..train.config import parse_overrides  # codemap.train is optional: import it late
    from ..train.loop import train
    from ..train.reviews import format_report

    setup_logging(False, False)
    summary = train(parse_overrides(list(ctx.args)))
    typer.echo(json.dumps(summary, indent=2))
    if "review_report" in summary:
        typer.echo(format_report(summary["review_report"]))


@app.command("train-reranker", context_settings={"allow_extra_args": True,
                                                   "ignore_unknown_options": True})
@user_errors
def train_reranker_command(ctx: typer.Context) -> None:
    """Train a cross-encoder re-ranker on knowledge graphs: synonyms as positives, the default
    bi-encoder's top names of other concepts as hard negatives (options: `--key value` of
    codemap.train's TrainConfig, e.g. --kg, --holdout, --base, --steps, --rerank-negatives; needs
    torch). Use it with `codemap map/eval --rerank OUT/model`.

    Example: codemap train-reranker --kg loinc-en --kg icd10cm --data-dir ../shared/data --steps 300 --out runs/reranker --holdout tests/data/mimic_labs_gold.tsv
    """
    import json

    from ..train.config import parse_overrides  # codemap.train is optional: import it late
    from ..train.rerank import train_reranker

    setup_logging(False, False)
    typer.echo(json.dumps(train_reranker(parse_overrides(list(ctx.args))), indent=2))
