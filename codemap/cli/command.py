"""What every command does around its body: a user's mistake (CodemapError) becomes one line on
stderr and exit code 2, logging is set up once, progress bars only on a terminal."""
from __future__ import annotations

import functools
import logging
import os
import sys

import typer

from ..errors import CodemapError


def user_errors(command):
    """Turn CodemapError into one line on stderr and exit code 2; anything else is a bug."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except CodemapError as exc:
            typer.echo(f"codemap: error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper


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
    """Progress bars on a terminal only: piped or logged output gets no bar lines."""
    return not quiet and sys.stderr.isatty()
