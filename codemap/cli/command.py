"""What every command does around its body: a user's mistake (CodemapError) becomes one line on
stderr and exit code 2, logging is set up once, progress bars only on a terminal."""
from __future__ import annotations

import functools
import logging
import os
import typing

import typer
from typer.core import TyperCommand, TyperGroup

from ..errors import CodemapError


def user_errors(command):
    """Turn CodemapError into one line on stderr and exit code 2; anything else is a bug."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except CodemapError as exc:
            typer.echo(f"codemap: error: {one_line(str(exc))}", err=True)
            raise typer.Exit(2) from None

    return wrapper


ERROR_CHARS = 284  # with "codemap: error: " a line of 300, however long what it quotes


def one_line(message: str) -> str:
    """The message on one line of at most ERROR_CHARS characters: the messages name lists short
    already (read.bounds.name_list); this is the last guard against one quoting a whole cell."""
    message = " ".join(message.split())
    return message if len(message) <= ERROR_CHARS else message[:ERROR_CHARS - 1] + "…"


def setup_logging(verbose: bool, quiet: bool) -> None:
    level = logging.DEBUG if verbose else logging.ERROR if quiet else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # Hugging Face libraries print advice on every load; keep our output readable.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.getLogger("transformers").setLevel(logging.ERROR)
    # The one info line every run shows: which columns of the code list were taken as code, text,
    # unit and specimen (a missed code column would otherwise pass as row numbers).
    logging.getLogger("codemap.read.readers.columns").setLevel(
        logging.ERROR if quiet else logging.DEBUG if verbose else logging.INFO)


def progress_bars(quiet: bool) -> bool:
    """Progress unless --quiet: bars on a terminal, a line every half minute in a log or a pipe
    (codemap.progress)."""
    return not quiet


class _CleanHelp:
    """Help as a reader expects it, whatever typer's release renders: plain text that wraps at
    any terminal width (rich's boxed tables cut option names to "--learned-ranki…" at 80
    columns), options in one section per help panel (pipeline stage), a flag shows no value type
    (typer 0.29 labels `--quiet <bool>` as if it took a value), the usage line names arguments the
    click way (`SOURCE...`, `[CODE]`, not `{SOURCE...}...`), and the command list shows each
    command's first paragraph on one line."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.rich_markup_mode = None  # click's own formatter: wrapped, never cut
        if self.short_help is None and self.help:
            first = self.help.strip().split("\n\n")[0]
            self.short_help = " ".join(first.split())

    def format_options(self, ctx, formatter) -> None:
        """Arguments, then the options of each help panel in the order they are declared."""
        sections: dict[str, list] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None:
                name = ("Arguments" if param.param_type_name == "argument"
                        else getattr(param, "rich_help_panel", None) or "Options")
                sections.setdefault(name, []).append(record)
        for name, records in sections.items():
            with formatter.section(name):
                formatter.write_dl(records)
        if isinstance(self, TyperGroup):
            self.format_commands(ctx, formatter)

    # typer vendors its own click (typer._click): parameters are told apart by their
    # param_type_name, not by isinstance on the click package.
    def get_params(self, ctx) -> list:
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""  # typer shows a metavar instead of the type: show nothing
            elif getattr(param, "multiple", False) and param.metavar is None:
                # the element's type, as typer shows a single value's, not `<list[str]>`
                annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
                element = typing.get_args(annotation)
                param.metavar = f"<{element[0].__name__.lower() if element else 'str'}>"
        return params

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = param.metavar or param.name.upper()
                if param.nargs != 1 and not name.endswith("..."):
                    name += "..."
                pieces.append(name if param.required else f"[{name}]")
        if isinstance(self, TyperGroup):
            pieces.append(self.subcommand_metavar)
        return pieces


class Command(_CleanHelp, TyperCommand):
    """Every codemap command (set on each in codemap.cli)."""


class Group(_CleanHelp, TyperGroup):
    """`codemap` and `codemap vocab`."""
