"""`codemap memory ...`: what a mapping memory teaches the next run, undoing a decision, and
re-checking its mappings against a new release of their target."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..config import EncoderConfig
from .command import progress_bars, setup_logging, user_errors
from .options import CacheDir, Model, Store

app = typer.Typer(help="List the local names a mapping memory ranks with; forget wrong decisions; "
                       "re-check its mappings against a new release.", no_args_is_help=True)

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


@app.command("recheck")
@user_errors
def memory_recheck_command(
    memory: Path = MemoryPath,
    target: str = typer.Option(..., "--target", "-t",
                               help="The vocabulary's store name, its new release imported under "
                                    "it (`codemap vocab import ... --name NAME`)."),
    output: Path = typer.Option(..., "--output", "-o",
                                help="Review workbook (.xlsx; or .csv/.tsv) of the mappings that "
                                     "need attention."),
    site: Optional[str] = typer.Option(None, "--site", show_default="the memory's only site",
                                       help="Whose decisions to re-check."),
    candidates: bool = typer.Option(True, "--candidates/--no-candidates",
                                    help="Also rank the new release's candidates for each listed "
                                         "source text with the model (--no-candidates: the "
                                         "release's replacements only, in seconds)."),
    top_k: int = typer.Option(5, "--top-k", "-k", min=1, max=100,
                              help="Ranked candidates per listed source."),
    store: Store = None, model: Model = EncoderConfig.model, cache_dir: CacheDir = None,
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress or summary."),
) -> None:
    """Compare every approved mapping in the memory with a new release of its target: unchanged,
    renamed, replaced (the release names a successor), split (ICD-10: codes below it took its
    place) or retired. Writes a review workbook of all but the unchanged, the replacements first,
    then ranked candidates; `codemap apply OUT --memory MEMORY` writes the reviewed decisions
    back, the replaced ones kept in the memory's history.

    Example: codemap memory recheck mappings.db --target ICD10CM -o recheck.xlsx
    """
    import time

    from ..review.recheck import STATUSES, recheck_memory
    from ..write.writers import write_candidates

    setup_logging(False, quiet)
    clock = time.perf_counter()
    rank = _ranker(target, store, model, cache_dir, top_k, quiet) if candidates else None
    result = recheck_memory(memory, target, site=site, store_dir=store, rank=rank)
    write_candidates(result.workbook, output, result.run)
    if quiet:
        return
    run = result.run
    typer.echo(f"{run['mappings_checked']} approved mappings of {run['target']} "
               f"({run['earlier_releases']}) re-checked against {run['target_version']}: "
               + ", ".join(f"{result.counts[s]} {s}" for s in STATUSES))
    typer.echo(f"{run['sources_listed']} sources to review → {output} "
               f"({time.perf_counter() - clock:.1f} s)")


def _ranker(target: str, store: Optional[Path], model: str, cache_dir: Optional[Path],
            top_k: int, quiet: bool):
    """Rank a re-check's source texts on the new release as `codemap map` would (its default
    ranking and confidence), returning the candidates and what was loaded (the run sheet's)."""
    from ..config import MapConfig, RankConfig, default_cache_dir
    from ..engines.local import Mapper

    def rank(sources):
        config = MapConfig(source=sources.path, target=target, store_dir=store,
                           encoder=EncoderConfig(model=model), rank=RankConfig(top_k=top_k),
                           cache_dir=cache_dir or default_cache_dir(),
                           progress=progress_bars(quiet))
        mapper = Mapper.load(config, sources.texts).for_list(sources.query_texts)
        return mapper.map_block(sources), mapper.describe()

    return rank
