"""The `codemap` command line (also `python -m codemap`): one module per group of commands, each
command a short function that builds config objects from its options, calls one library function
and prints; the work lives in the library."""
from __future__ import annotations

import typer
from typer.core import TyperCommand

from .command import Command, Group

from .evaluate import app as evaluate_app
from .export import app as export_app
from .harmonise import app as harmonise_app
from .map import app as map_app
from .memory import app as memory_app
from .review import app as review_app
from .train import app as train_app
from .vocab import app as vocab_app

app = typer.Typer(help="Map local lab, procedure and medication codes onto standard vocabularies.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False,
                  add_completion=False, cls=Group)
TOP_LEVEL = (map_app, evaluate_app, train_app, export_app, review_app, harmonise_app)
# Without a name a group's commands join the top level (`codemap map`, `codemap eval`…).
for group in TOP_LEVEL:
    app.add_typer(group)
app.add_typer(vocab_app, name="vocab", cls=Group)
app.add_typer(memory_app, name="memory", cls=Group)
# Every command renders its help through the one Command class (codemap.cli.command).
for group in (*TOP_LEVEL, vocab_app, memory_app):
    for info in group.registered_commands:
        if info.cls in (None, TyperCommand):  # typer's default, not a class a command chose
            info.cls = Command

__all__ = ["app", "main"]


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"codemap {version('codemap')}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", is_eager=True,
                                          callback=_print_version,
                                          help="Show codemap's version and exit.")) -> None:
    pass


def main() -> None:
    app(prog_name="codemap")
