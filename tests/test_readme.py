"""Every command the README shows parses (its options exist and take values of the right type),
and the ones that need only the repository's files run as written, in README order, on a copy of
the examples: a user who pastes them meets no error."""
import re
import shlex
import shutil
import subprocess
import sys

import openpyxl
import pytest
import typer.main

from codemap.cli import app

from .conftest import EXAMPLES, REPO

README = REPO / "README.md"
# "codemap …" inside an indented code line, up to a comment, a ";" or "&&"
_COMMAND = re.compile(r"(?:^|;|&&|\bdo)\s*(codemap\s[^;#&]*?)(?=\s*(?:;|&&|\s#|$))")


def readme_commands() -> list[str]:
    """The codemap commands of the README's code lines, in order."""
    found = []
    for line in README.read_text(encoding="utf-8").splitlines():
        if line.startswith("    ") and "codemap " in line:
            found += [m.group(1).strip() for m in _COMMAND.finditer(line.strip())]
    return found


def test_the_readme_shows_commands():
    commands = readme_commands()
    assert "codemap map examples/labs.xlsx --target LOINC" in commands
    assert len(commands) > 25


def _context(command: str):
    """The click context of a README command, its options parsed (raises on a bad one)."""
    words = shlex.split(command)[1:]
    group, name = typer.main.get_command(app), "codemap"
    while words and hasattr(group, "commands") and words[0] in group.commands:
        group, name = group.commands[words[0]], words.pop(0)
    assert not hasattr(group, "commands"), f"{command}: no such command"
    return group.make_context(name, words)


@pytest.mark.parametrize("command", readme_commands())
def test_every_readme_command_parses(command):
    _context(command.replace("$site", "boston"))


def _inputs(command: str) -> list[str]:
    """The files a command reads: lists, workbooks, sites (NAME=FILE)."""
    params = _context(command).params
    found = list(params.get("sources") or []) + [params.get("workbook") or ""]
    found += [site.split("=", 1)[-1] for site in params.get("site") or []]
    return [str(f) for f in found if str(f)]


def test_readme_commands_run_as_written(tmp_path, shared_cache, monkeypatch):
    """Those whose inputs are the repository's (or an earlier command's outputs) run, in README
    order, on a copy of the examples; the review between `map` and `apply` is scripted."""
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    monkeypatch.setenv("CODEMAP_CACHE_DIR", str(shared_cache))
    ran = []
    for command in readme_commands():
        sites = ("boston", "leeds", "berlin") if "$site" in command else ("",)
        for one in [command.replace("$site", site) for site in sites]:
            inputs = _inputs(one)
            if not (inputs or one == "codemap vocab list") or not all(
                    (tmp_path / f).exists() for f in inputs):
                continue  # a user's own file (labs.xlsx, a release download): parsed only
            if one.startswith("codemap apply") and not ran[-1].startswith("codemap apply"):
                _approve_first_candidates(tmp_path / inputs[0])
            done = subprocess.run([sys.executable, "-m", "codemap", *shlex.split(one)[1:]],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=900)
            assert done.returncode == 0, (one, done.stderr[-2000:])
            ran.append(one)
        if "examples/harmonise/$site" in command:  # the README's scripted review comes next
            subprocess.run([sys.executable, "examples/harmonise/review.py",
                            *[f"out/{s}.codemap.xlsx" for s in ("boston", "leeds", "berlin")]],
                           cwd=tmp_path, check=True, capture_output=True)
    assert "codemap map examples/labs.xlsx --target LOINC" in ran
    assert any(c.startswith("codemap apply") for c in ran) and any("harmonise -s" in c for c in ran)


def _approve_first_candidates(workbook) -> None:
    """The README's review step ("set decision to approved on the right candidate"), scripted:
    every source's first candidate approved."""
    book = openpyxl.load_workbook(workbook)
    sheet = book["candidates"]
    header = [cell.value for cell in sheet[1]]
    rank, decision = header.index("rank") + 1, header.index("decision") + 1
    for row in range(2, sheet.max_row + 1):
        if sheet.cell(row=row, column=rank).value == 1:
            sheet.cell(row=row, column=decision, value="approved")
    book.save(workbook)
