"""Every command has help text with an example, and the README mentions it."""
import typer.main

from codemap.cli import app

from .conftest import REPO


def commands(group=app, prefix=""):
    click_group = typer.main.get_command(group)
    for name, command in click_group.commands.items():
        if hasattr(command, "commands"):
            for sub_name, sub in command.commands.items():
                yield f"{prefix}{name} {sub_name}", sub
        else:
            yield f"{prefix}{name}", command


def test_every_command_has_help_with_an_example_and_is_in_the_readme():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = list(commands())
    assert {"map", "eval", "apply", "train", "vocab list"} <= {name for name, _ in found}
    for name, command in found:
        assert command.help and "Example: codemap" in command.help, name
        assert f"codemap {name}" in readme, f"README does not mention `codemap {name}`"
