"""`codemap train` and `codemap train-reranker`: the trainers of codemap.train. Their options are
made from TrainConfig's fields (each with its default, group and line of help), so `--help` lists
every setting and a new field is an option without touching this file."""
from __future__ import annotations

import inspect
import json
from dataclasses import MISSING, Field, fields
from typing import Annotated, List, Optional

import typer

from ..train.config import TrainConfig, configure
from .command import setup_logging, user_errors

app = typer.Typer()

Preset = Annotated[Optional[str], typer.Option(
    "--config", help="A preset in train/configs (smoke, gpu, …) or a JSON file; the options "
                     "given beside it override its values.")]


def train_options(command):
    """Give `command` one option per TrainConfig field after its own parameters (typer reads the
    options from the signature); the command takes them as **settings."""
    own = [p for p in inspect.signature(command, eval_str=True).parameters.values()
           if p.kind is not inspect.Parameter.VAR_KEYWORD]
    command.__signature__ = inspect.Signature(own + [_option(f) for f in fields(TrainConfig)])
    return command


def _option(setting: Field) -> inspect.Parameter:
    default = setting.default if setting.default is not MISSING else setting.default_factory()
    repeated = isinstance(default, tuple)
    # Values stay text here: configure() converts them, as it does for `python -m codemap.train`.
    option = typer.Option(f"--{setting.name.replace('_', '-')}", help=setting.metadata["help"],
                          rich_help_panel=setting.metadata["group"],
                          metavar=_METAVARS.get(type(default), "TEXT"),
                          # typer shows no default for "" or (): say it is empty
                          show_default=True if default not in ("", ()) else "empty")
    kind = List[str] if repeated else str
    return inspect.Parameter(setting.name, inspect.Parameter.KEYWORD_ONLY,
                             default=list(default) if repeated else default,
                             annotation=Annotated[kind, option])


_METAVARS = {bool: "BOOLEAN", int: "INTEGER", float: "FLOAT"}


def given(ctx: typer.Context, settings: dict) -> list[tuple[str, str]]:
    """The settings typed on the command line as (--key, value) pairs, repeated options once per
    value; a value left at its default is not passed, so a preset's value stands."""
    pairs = []
    for name, value in settings.items():
        # by name: typer carries its own copy of click, so the enum class is not click's
        if getattr(ctx.get_parameter_source(name), "name", "") == "COMMANDLINE":
            flag = f"--{name.replace('_', '-')}"
            pairs += [(flag, v) for v in value] if isinstance(value, list) else [(flag, value)]
    return pairs


@app.command("train")
@user_errors
@train_options
def train_command(ctx: typer.Context, preset: Preset = None, **settings) -> None:
    """Train a CODER model on knowledge graphs (needs torch). Multi-GPU: torchrun -m codemap.train.
    `--from-reviews mappings.db` fine-tunes on the reviews in a mapping memory instead and reports
    held-out acc@1/acc@10 before and after (OUT/report.json).

    Example: codemap train --kg loinc --kg hpo --data-dir ../shared/data --steps 200 --out runs/coder
    (or: codemap train --from-reviews mappings.db --base default --out runs/site-tuned --steps 60)
    """
    # codemap.train needs torch: it is imported when a command runs, not with the CLI.
    from ..train.loop import train
    from ..train.reviews import format_report

    setup_logging(False, False)
    summary = train(configure(preset, given(ctx, settings)))
    typer.echo(json.dumps(summary, indent=2))
    if "review_report" in summary:
        typer.echo(format_report(summary["review_report"]))


@app.command("train-reranker")
@user_errors
@train_options
def train_reranker_command(ctx: typer.Context, preset: Preset = None, **settings) -> None:
    """Train a cross-encoder re-ranker on knowledge graphs: synonyms as positives, the default
    bi-encoder's top names of other concepts as hard negatives (the options that matter: --kg,
    --holdout, --base, --steps and the Re-ranker group; needs torch). Use it with `codemap
    map/eval --rerank OUT/model`.

    Example: codemap train-reranker --kg loinc-en --kg icd10cm --data-dir ../shared/data --steps 300 --out runs/reranker --holdout tests/data/mimic_labs_gold.tsv
    """
    from ..train.rerank import train_reranker

    setup_logging(False, False)
    typer.echo(json.dumps(train_reranker(configure(preset, given(ctx, settings))), indent=2))
