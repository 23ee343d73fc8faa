"""`codemap vocab ...`: import, list, show, remove and embed the vocabularies codemap maps onto."""
from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from ..config import EncoderConfig, IndexConfig, RayConfig, VocabFilter, default_cache_dir
from .command import setup_logging, user_errors
from .options import (BatchSize, CacheDir, Device, Engine, EngineOption, Filters, Langs, Model,
                      NumGpus, RayAddress, StandardOnly, Store, TwoStageAbove, Workers,
                      encoder_config, ray_config)

app = typer.Typer(help="Import, list, show and remove the vocabularies codemap maps onto.",
                  no_args_is_help=True)


class VocabFormat(str, Enum):
    loinc = "loinc"
    omop = "omop"
    umls = "umls"
    snomed = "snomed"
    rxnorm = "rxnorm"
    icd10cm = "icd10cm"
    icd10 = "icd10"
    obo = "obo"
    table = "table"


@app.command("import")
@user_errors
def vocab_import_command(
    fmt: VocabFormat = typer.Argument(..., metavar="FORMAT", help="Publisher format."),
    path: Path = typer.Argument(..., help="The release as shipped: file, folder or zip."),
    name: Optional[str] = typer.Option(None, "--name", help="Name in the store.",
                                       show_default="the format's, e.g. LOINC, OMOP, HP"),
    version: Optional[str] = typer.Option(None, "--version", help="Release label.",
                                          show_default="read from the files"),
    vocabulary: Optional[List[str]] = typer.Option(None, "--vocabulary",
                                                   help="omop: keep this vocabulary_id; repeat."),
    domain: Optional[List[str]] = typer.Option(None, "--domain", help="omop: keep this domain_id; "
                                                                      "repeat."),
    concept_class: Optional[List[str]] = typer.Option(None, "--concept-class",
                                                      help="omop: keep this concept_class_id; "
                                                           "repeat."),
    standard_only: bool = typer.Option(False, "--standard-only",
                                       help="omop: standard concepts only."),
    valid_only: bool = typer.Option(False, "--valid-only",
                                    help="omop: drop concepts with an invalid_reason."),
    sab: Optional[List[str]] = typer.Option(None, "--sab", help="umls/rxnorm: keep this source "
                                                                "(SAB); repeat."),
    lang: Optional[List[str]] = typer.Option(None, "--lang", help="Keep names in this language "
                                                                  "(umls: ENG, GER…; loinc: de); "
                                                                  "repeat."),
    store: Store = None,
) -> None:
    """Import a vocabulary release into the store (replacing an older one of the same name).

    Example: codemap vocab import omop ./athena/ --vocabulary LOINC --standard-only
    """
    from ..vocab import ImportOptions, VocabStore

    setup_logging(False, False)
    options = ImportOptions(name=name, version=version, vocabularies=tuple(vocabulary or ()),
                            sabs=tuple(sab or ()), langs=tuple(lang or ()),
                            domains=tuple(domain or ()),
                            concept_classes=tuple(concept_class or ()),
                            standard_only=standard_only, valid_only=valid_only)
    stored = VocabStore(store).import_files(fmt.value, path, options)
    m = stored.meta
    typer.echo(f"{stored.name}\t{stored.version}\t{m['concepts']:,} concepts\t{m['names']:,} names"
               f"\t{m['relations']:,} relations → {stored.path}")


@app.command("list")
@user_errors
def vocab_list_command(store: Store = None) -> None:
    """List the vocabularies available as --target: built in and imported into the store.

    Example: codemap vocab list
    """
    from ..vocab import VocabStore
    from ..vocab.vocabulary import BUILTINS

    for name, builtin in BUILTINS.items():
        vocab = builtin.load()
        typer.echo(f"{name}\t{vocab.version}\t{len(vocab.concepts):,} concepts\t"
                   f"{len(vocab.names):,} names\tbuilt in: {builtin.description}\t"
                   f"licence: {builtin.licence}")
    for stored in VocabStore(store).list():
        m = stored.meta
        typer.echo(f"{stored.name}\t{stored.version}\t{m.get('concepts', 0):,} concepts\t"
                   f"{m.get('names', 0):,} names\t{m.get('format', '')} in {stored.path}")


@app.command("show")
@user_errors
def vocab_show_command(
    name: str = typer.Argument(..., help="Vocabulary name in the store."),
    code: Optional[str] = typer.Argument(None, help="A concept code: show its names and relations."),
    store: Store = None,
) -> None:
    """Show an imported vocabulary's release, sources and counts, or one of its concepts.

    Example: codemap vocab show LOINC 2345-7
    """
    import json

    from ..vocab import VocabStore

    shown = VocabStore(store).show(name, code)
    if code is None:
        typer.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    for key, value in shown["concept"].items():
        typer.echo(f"{key}: {value}")
    typer.echo("names:")
    typer.echo(shown["names"].to_string(index=False))
    typer.echo("relations:")
    typer.echo(shown["relations"].to_string(index=False))


@app.command("rm")
@user_errors
def vocab_rm_command(name: str = typer.Argument(..., help="Vocabulary name in the store."),
                     store: Store = None) -> None:
    """Remove a vocabulary from the store.

    Example: codemap vocab rm OMOP
    """
    from ..vocab import VocabStore

    typer.echo(f"removed {VocabStore(store).remove(name)}")


@app.command("embed")
@user_errors
def vocab_embed_command(
    name: str = typer.Argument(..., help="Vocabulary: a --target value (store name, LOINC, file)."),
    model: Model = EncoderConfig.model,
    engine: EngineOption = Engine.local,
    ray_address: RayAddress = None,
    workers: Workers = RayConfig.workers,
    num_gpus: NumGpus = RayConfig.num_gpus,
    batch_size: BatchSize = EncoderConfig.batch_size,
    device: Device = EncoderConfig.device,
    cache_dir: CacheDir = None,
    filters: Filters = None,
    standard_only: StandardOnly = False,
    lang: Langs = None,
    store: Store = None,
    two_stage_above: TwoStageAbove = IndexConfig.two_stage_above,
) -> None:
    """Index a vocabulary ahead of `codemap map`: every name embedded (with --engine ray, in chunks
    over a pool of actors; an interrupted build resumes from finished chunks), or above
    --two-stage-above names its two stages, whose pooled names are embedded as lists are mapped.

    Example: codemap vocab embed LOINC --model default --engine ray --workers 2
    """
    from ..domains import prepare_target
    from ..engines.ray import embed_vocabulary
    from ..vocab import load_target

    setup_logging(False, False)
    cache = cache_dir or default_cache_dir()
    # The vocabulary as `codemap map` ranks it (prepared by its domain): the index map loads.
    vocab = prepare_target(load_target(name, VocabFilter.from_options(filters, standard_only, lang),
                                       store or cache / "store")).vocab
    done = embed_vocabulary(vocab, encoder_config(model, batch_size, device), cache,
                            ray_config(engine, ray_address, workers, num_gpus),
                            IndexConfig(two_stage_above=two_stage_above))
    if done["kind"] == "two-stage":
        state = "already cached" if done["cache_hit"] else "built"
        typer.echo(f"{vocab.id}: {done['names']:,} names: two-stage index {state} in "
                   f"{done['seconds']:.1f} s → {done['folder']}; the model embeds each list's "
                   f"pooled names as it is mapped (--two-stage-above {done['names']} embeds every name)")
        return
    state = "already cached" if done["cache_hit"] else f"{done['embedded_by_ray']} chunks by Ray"
    typer.echo(f"{vocab.id}: {done['names']:,} names in {done['chunks']} chunks ({state}) in "
               f"{done['seconds']:.1f} s → {done['folder']}")
