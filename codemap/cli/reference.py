"""docs/cli.md: every command's --help in one page, generated, so the reference cannot drift
from the tool (tests/test_docs.py fails when the page is out of date).

    python -m codemap.cli.reference > docs/cli.md
"""
from __future__ import annotations

import sys

import typer
from typer.testing import CliRunner

from . import app

WIDTH = 100  # help is rendered at a fixed width so the page does not depend on the terminal


def command_paths(group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command under `group`, sub-groups included, in the order `--help` lists them."""
    paths = []
    for name, command in group.commands.items():
        if command.hidden:
            continue
        paths.append(prefix + (name,))
        if hasattr(command, "commands"):  # a sub-group (typer carries its own copy of click)
            paths += command_paths(command, prefix + (name,))
    return paths


def render() -> str:
    """The markdown page: the top-level help, then one section per command."""
    runner = CliRunner()
    env = {"COLUMNS": str(WIDTH), "TERMINAL_WIDTH": str(WIDTH), "NO_COLOR": "1"}
    sections = ["# Command reference", "",
                "Generated from `--help` by `python -m codemap.cli.reference > docs/cli.md`; "
                "do not edit by hand.", ""]
    for path in [()] + command_paths(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env=env, terminal_width=WIDTH)
        text = "\n".join(line.rstrip() for line in result.output.splitlines()).strip("\n")
        sections += [f"## codemap {' '.join(path)}".rstrip(), "", "```", text, "```", ""]
    return "\n".join(sections)


if __name__ == "__main__":
    sys.stdout.write(render())
