"""`codemap memory ...`: what a mapping memory teaches the next run, and undoing a decision."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from .command import user_errors

app = typer.Typer(help="List the local names a mapping memory ranks with; forget wrong decisions.",
                  no_args_is_help=True)

MemoryPath = typer.Argument(..., help="Mapping memory (.db) written by `codemap apply --memory`.")
Target = typer.Option(None, "--target", "-t", show_default="the only target it has",
                      help="Target vocabulary id, as the memory stores it (e.g. LOINC).")


@app.command("list")
@user_errors
def memory_list_command(memory: Path = MemoryPath, target: Optional[str] = Target,
                        output: Optional[Path] = typer.Option(
                            None, "--output", "-o", help="Write the table as CSV instead.")) -> None:
    """Every approved text `map --memory` reads as a name of its concept, and every rejected
    pair it ranks last, with sites, reviewers, release and status.

    Example: codemap memory list mappings.db
    """
    from ..files import atomic_path
    from ..review.memory import local_name_table

    target, table = local_name_table(memory, target)
    if output is not None:
        with atomic_path(output) as tmp:
            table.to_csv(tmp, index=False)
        typer.echo(f"{len(table)} local names and rejections of {target} → {output}")
        return
    typer.echo(f"{target}: {int((table['decision'] == 'approved').sum())} approved local names, "
               f"{int((table['decision'] == 'rejected').sum())} rejected pairs")
    for row in table.itertuples(index=False):
        typer.echo(f"  {row.decision:8} {row.name!r} → {row.code}  [{row.sites or '-'}; "
                   f"{row.reviewers or '-'}; {row.decided or '-'}] {row.status}")


@app.command("forget")
@user_errors
def memory_forget_command(
    memory: Path = MemoryPath, target: Optional[str] = Target,
    text: Optional[str] = typer.Option(None, "--text", help="Source text (case and spacing aside)."),
    code: Optional[str] = typer.Option(None, "--code", help="Target code."),
    site: Optional[str] = typer.Option(None, "--site", help="Site."),
) -> None:
    """Delete the decisions matching every part given: a wrong approval stops pre-filling and
    stops being a local name at the next run (the target's index is not rebuilt).

    Example: codemap memory forget mappings.db --text "Kreatinin i.S." --code 2160-0
    """
    from ..errors import CodemapError
    from ..review.memory import MappingMemory, stored_target

    if not memory.exists():
        raise CodemapError(f"{memory}: no such mapping memory")
    with MappingMemory(memory) as store:
        target = stored_target(store, target)
        removed = store.forget(target, text=text, code=code, site=site)
    typer.echo(f"forgot {removed} decision(s) of {target}")
