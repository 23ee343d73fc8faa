"""The training loop, readable top to bottom (nanoGPT style).

    python -m codemap.train --config smoke --data-dir ../shared/data            # CPU smoke run
    python -m codemap.train --kg loinc --kg hpo --steps 20000 --out runs/coder  # one GPU
    torchrun --nproc-per-node 8 -m codemap.train --config gpu --data-dir DATA   # multi-GPU (DDP)

Setup: resolve the base model, build the knowledge graph (minus held-out names), build the loss
and AdamW with linear warm-up/decay; resume from the newest checkpoint in `out` if there is one.
Loop: sample a batch (a pure function of seed, rank and step), forward under autocast, backward
(gradients synced by DDP only on the last micro-batch), clip, step; log, checkpoint, evaluate.
"""
from __future__ import annotations

import csv
import logging
import os
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

import torch

from codemap.config import EncoderConfig, EvalConfig, ReadOptions
from codemap.errors import CodemapError
from codemap.progress import bar as progress_bar
from codemap.embed import Pooling, resolve_model
from codemap.read import read_code_list

from .checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint, save_model_folder
from .config import TrainConfig
from .kg import KnowledgeGraph, TripletSampler, build_graph, clean_name
from .model import CoderModel, TermEncoder, add_lora, build_loss
from .reviews import format_report, load_reviews, write_report
from .sources import resolve_kg

log = logging.getLogger(__name__)

LOG_COLUMNS = ["step", "loss", "term", "relation", "lr", "steps_per_s", "names_per_s", "elapsed_s"]
EVAL_COLUMNS = ["step", "n", "acc@1", "acc@5", "acc@10", "mrr"]


def train(config: TrainConfig) -> dict:
    """Train a CODER model as `config` says; returns a summary (graph, steps, timings, scores).

    The model lands in `config.out`/model (Hugging Face folder + codemap.json + relation
    parameters). Raises CodemapError for bad settings, data or model specs.
    """
    check_config(config)
    if config.threads:
        torch.set_num_threads(config.threads)
    rank, world, device = _setup_distributed(config.device)
    torch.manual_seed(config.seed + rank)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)

    # --- data and model ---
    reviews = None
    if config.from_reviews:  # site tuning: the reviews replace the knowledge graph
        reviews, config = load_reviews(config, out)
        graph = reviews.graph
    else:
        graph = load_graph(config)
    log.info("training graph: %s", graph.summary())
    from transformers import AutoModel, AutoTokenizer

    info = resolve_model(config.base)
    pooling = Pooling(config.pooling) if config.pooling else info.pooling
    base = AutoModel.from_pretrained(info.path)
    if config.lora_rank:
        base = add_lora(base, config.lora_rank, config.lora_alpha, config.lora_dropout)
    encoder = TermEncoder(base, AutoTokenizer.from_pretrained(info.path), pooling,
                          config.max_length, info.prefix)
    sampler = TripletSampler(graph, config.batch_triplets, config.repeats, config.seed, rank,
                             config.hard_negatives)
    model = CoderModel(encoder, build_loss(config, len(graph.relation_labels),
                                           encoder.model.config.hidden_size)).to(device)
    model.train()
    optimizer = _optimizer(model, config)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_factor(s, config))
    extra = {"base_model": config.base, "base_model_path": str(info.path),
             "kg": [] if reviews else list(config.kg), "reviews": config.from_reviews,
             "data_hash": graph.content_hash,
             "graph": graph.summary(), "relation_labels": graph.relation_labels,
             "train_config": config.as_dict()}
    start = 0
    resume_from = latest_checkpoint(out)
    if resume_from is not None:
        state = load_checkpoint(resume_from, model, optimizer, scheduler, device)
        if state.get("data_hash") != graph.content_hash:
            raise CodemapError(f"{resume_from}: was trained on other data; use a new --out")
        # A name like "default" moves when a rule gives it other weights (coder-en on
        # 2026-11-24, coder-multilingual on 2026-11-25): an adapter must go on top of the
        # weights it was trained on.
        if state.get("base", info.key()) != info.key():
            raise CodemapError(f"{resume_from}: was trained on base {state['base']!r}, but "
                               f"--base {config.base} now names {info.key()!r}; resume with the "
                               f"base it was trained on (default-base / multilingual-base for "
                               f"the untrained ones)")
        start = state["step"]
        log.info("resumed from %s at step %d", resume_from, start)
    ddp = model
    if world > 1:
        ddp = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None)
    autocast, scaler = _precision(config, device)
    evaluations = []
    if rank == 0 and config.eval_file and start == 0:
        evaluations.append(evaluate_model(model, config, info.path, extra, step=0))
        _append_csv(out / "eval.csv", EVAL_COLUMNS, evaluations[-1])

    # --- the loop ---
    names_per_step = 2 * config.batch_triplets * config.grad_accum  # heads and tails
    bar = progress_bar(config.steps, "training", "step", config.progress and rank == 0,
                       initial=start)
    started = time.perf_counter()
    window_start, window_steps, step = started, 0, start
    for step in range(start + 1, config.steps + 1):
        parts = {"loss": 0.0, "term": 0.0, "relation": 0.0}
        for micro in range(config.grad_accum):
            batch = sampler.batch((step - 1) * config.grad_accum + micro)
            tokens = encoder.tokenize(batch.names, device)
            labels = torch.as_tensor(batch.labels, device=device)
            relations = torch.as_tensor(batch.relations, device=device)
            # DDP would all-reduce after every backward; only the last micro-batch needs it.
            last = micro == config.grad_accum - 1
            sync = nullcontext() if last or world == 1 else ddp.no_sync()
            with sync, autocast():
                result = ddp(tokens, labels, relations)
            loss = result["loss"] / config.grad_accum
            (scaler.scale(loss) if scaler else loss).backward()
            for key in parts:
                parts[key] += float(result[key].detach()) / config.grad_accum
        optimizer_step(model, optimizer, scheduler, scaler, config.clip)
        window_steps += 1
        bar.update(1)
        bar.set_postfix(loss=f"{parts['loss']:.4f}", term=f"{parts['term']:.4f}",
                        rel=f"{parts['relation']:.4f}")
        if rank == 0 and (step % config.log_every == 0 or step == config.steps):
            now = time.perf_counter()
            row = {"step": step, **{k: round(v, 6) for k, v in parts.items()},
                   "lr": scheduler.get_last_lr()[0],
                   "steps_per_s": round(window_steps / max(now - window_start, 1e-9), 4),
                   "names_per_s": round(window_steps * names_per_step / max(now - window_start, 1e-9), 1),
                   "elapsed_s": round(now - started, 2)}
            _append_csv(out / "log.csv", LOG_COLUMNS, row)
            log.info("step %d loss %.4f (term %.4f, relation %.4f) lr %.2e %.3f steps/s", step,
                     parts["loss"], parts["term"], parts["relation"], row["lr"], row["steps_per_s"])
            window_start, window_steps = now, 0
        if rank == 0 and config.checkpoint_every and step % config.checkpoint_every == 0:
            save_checkpoint(out, step, model, optimizer, scheduler,
                            {"data_hash": graph.content_hash, "base": info.key(),
                             "config": config.as_dict()},
                            info.path, {**extra, "steps": step}, config.keep_checkpoints)
        if (rank == 0 and config.eval_file and config.eval_every and step % config.eval_every == 0
                and step != config.steps):
            evaluations.append(evaluate_model(model, config, info.path, extra, step=step))
            _append_csv(out / "eval.csv", EVAL_COLUMNS, evaluations[-1])
        if world > 1:
            torch.distributed.barrier()
    bar.close()
    train_seconds = time.perf_counter() - started
    trained = step - start

    # --- the final model ---
    summary = {"graph": graph.summary(), "steps": config.steps, "steps_this_run": trained,
               "train_seconds": round(train_seconds, 1),
               "steps_per_s": round(trained / train_seconds, 4) if trained else None,
               "model": str(out / "model"), "device": str(device), "world_size": world}
    if rank == 0:
        save_model_folder(out / "model", model, info.path,
                          {**extra, "steps": config.steps, "train_seconds": summary["train_seconds"]})
        if config.eval_file:
            final = evaluate_folder(out / "model", config, step=config.steps)
            _append_csv(out / "eval.csv", EVAL_COLUMNS, final)
            evaluations.append(final)
    summary["evaluations"] = evaluations
    if rank == 0 and reviews is not None and len(evaluations) >= 2:
        summary["review_report"] = write_report(out, reviews, config, summary)
        log.info("held-out reviews:\n%s", format_report(summary["review_report"]))
    if world > 1:
        torch.distributed.destroy_process_group()
    return summary


def check_config(config: TrainConfig) -> None:
    """Raise CodemapError for settings that cannot work, before anything slow happens."""
    choices = {"term_loss": ("ms", "infonce"), "relation_loss": ("cosine", "transe", "none"),
               "precision": ("auto", "fp32", "bf16", "fp16"), "pooling": ("", "cls", "mean"),
               "device": ("auto", "cpu", "cuda")}
    for key, allowed in choices.items():
        if getattr(config, key) not in allowed:
            raise CodemapError(f"--{key.replace('_', '-')} {getattr(config, key)!r}: choose one of "
                               f"{', '.join(a or '(empty)' for a in allowed)}")
    if config.steps < 1 or config.grad_accum < 1 or config.max_length < 2:
        raise CodemapError("--steps and --grad-accum must be ≥ 1 and --max-length ≥ 2")
    if not config.kg and not config.from_reviews:
        raise CodemapError("no --kg given: name at least one knowledge graph (e.g. --kg hpo)")


def load_graph(config: TrainConfig) -> KnowledgeGraph:
    """The knowledge graph of every --kg, without the names held out by --holdout files."""
    data_dir = Path(config.data_dir) if config.data_dir else None
    vocabularies = [resolve_kg(spec, data_dir) for spec in config.kg]
    held = holdout_names(config.holdout, config.eval_text_cols, config.drop_brackets)
    graph = build_graph(vocabularies, holdout=held, drop_brackets=config.drop_brackets,
                        relation_only_types=frozenset() if config.part_term_loss else {"part"},
                        languages=frozenset(config.languages))
    if config.holdout:
        log.info("holdout: removed %d training names equal to one of %d evaluation queries",
                 graph.removed_names, len(held))
    return graph


def holdout_names(files: tuple[str, ...], text_cols: tuple[str, ...],
                  drop_brackets: bool = False) -> set[str]:
    """Cleaned query texts of every holdout table (read by the one code-list reader), plus each
    text column's own values, so a name equal to any part of a query is also held out.

    A `.txt` entry is a list of tables, one `path<TAB>col,col` line each (paths relative to the
    working folder), so every table keeps its own query columns
    (benchmarks/data/holdout_queries.txt lists every evaluation set of the repository)."""
    held: set[str] = set()
    for path, cols in _holdout_tables(files, text_cols):
        source = read_code_list(path, ReadOptions(text_cols=cols))
        values = list(source.texts)
        for column in source.text_cols:
            values += source.frame[column].tolist()
        held |= {clean_name(v, drop_brackets) for v in values if str(v).strip()}
    held.discard("")
    return held


def _holdout_tables(files: tuple[str, ...], text_cols: tuple[str, ...]):
    for path in files:
        if not path.endswith(".txt"):
            yield path, text_cols
            continue
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                table, _, cols = line.partition("\t")
                yield table.strip(), tuple(c.strip() for c in cols.split(",") if c.strip())


def lr_factor(step: int, config: TrainConfig) -> float:
    """Linear warm-up over warmup_steps, then linear decay to 0 at `steps`."""
    if step < config.warmup_steps:
        return (step + 1) / (config.warmup_steps + 1)
    return max(0.0, (config.steps - step) / max(1, config.steps - config.warmup_steps))


def evaluate_model(model: CoderModel, config: TrainConfig, base_path: Path, extra: dict,
                   step: int) -> dict:
    """Dev scores of the model as it is now: saved to a temporary folder and scored by the same
    `evaluate_gold` that `codemap eval` runs (one evaluator, one encoder, one index)."""
    with tempfile.TemporaryDirectory(prefix="codemap-eval-") as tmp:
        folder = Path(tmp) / "model"
        save_model_folder(folder, model, base_path, extra)
        was_training = model.training
        result = evaluate_folder(folder, config, step)
        model.train(was_training)
    return result


def evaluate_folder(folder: Path, config: TrainConfig, step: int) -> dict:
    """Dev scores of a model folder: the embedding ranking alone as the row (eval.csv), and under
    "rankings" also `codemap map`'s default ranking, with the method's name."""
    from codemap.config import default_cache_dir
    from codemap.evaluate import evaluate_gold

    device = "cuda" if config.device in ("auto", "cuda") and torch.cuda.is_available() else "cpu"
    # The index cache is temporary (the model is new); store names resolve in the real store.
    store = Path(config.store_dir) if config.store_dir else default_cache_dir() / "store"
    with tempfile.TemporaryDirectory(prefix="codemap-eval-cache-") as cache:
        result = evaluate_gold(EvalConfig(
            gold=Path(config.eval_file), target=config.eval_target, gold_col=config.eval_gold_col,
            text_cols=config.eval_text_cols, encoder=EncoderConfig(model=str(folder), device=device),
            cache_dir=Path(cache), progress=False, store_dir=store))
    default = result["default_method"]
    row = {"step": step, **result["scores"]["encoder"].as_row(),
           "rankings": {"encoder": {"method": "encoder", **result["scores"]["encoder"].as_row()},
                        "default": {"method": default, **result["scores"][default].as_row()}}}
    log.info("eval at step %d: %s", step, row)
    return row


def _optimizer(model: CoderModel, config: TrainConfig) -> torch.optim.Optimizer:
    # Relation parameters start at I (or 0) and get their own, larger learning rate and no weight
    # decay: decay would pull the matrices towards 0, not towards I.
    # Frozen weights (a LoRA run's base) stay out: their optimiser state would be empty anyway,
    # but the parameter numbering of the saved state must match on resume.
    trainable = [p for p in model.encoder.parameters() if p.requires_grad]
    groups = [{"params": trainable, "lr": config.lr,
               "weight_decay": config.weight_decay}]
    relation = list(model.loss.parameters())
    if relation:
        groups.append({"params": relation, "lr": config.relation_lr, "weight_decay": 0.0})
    return torch.optim.AdamW(groups)


def optimizer_step(model, optimizer, scheduler, scaler, clip: float) -> None:
    """Clip (after unscaling fp16 gradients), step the optimiser and the schedule, clear."""
    if scaler:
        scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], clip)
    if scaler:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)


def _precision(config: TrainConfig, device: torch.device):
    precision = config.precision
    if precision == "auto":
        precision = "bf16" if device.type == "cuda" else "fp32"
    if precision == "fp32":
        return nullcontext, None
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    scaler = torch.amp.GradScaler(device.type) if precision == "fp16" else None
    return (lambda: torch.autocast(device.type, dtype=dtype)), scaler


def _setup_distributed(wanted: str) -> tuple[int, int, torch.device]:
    """Rank, world size and device; under torchrun, joins the process group it set up."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    use_cuda = wanted == "cuda" or (wanted == "auto" and torch.cuda.is_available())
    if wanted == "cuda" and not torch.cuda.is_available():
        raise CodemapError("--device cuda was asked for, but PyTorch sees no CUDA GPU")
    if world == 1:
        return 0, 1, torch.device("cuda" if use_cuda else "cpu")
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local)
    torch.distributed.init_process_group("nccl" if use_cuda else "gloo")
    device = torch.device(f"cuda:{local}" if use_cuda else "cpu")
    return torch.distributed.get_rank(), world, device


def _append_csv(path: Path, columns: list[str], row: dict) -> None:
    new = not path.exists()
    with open(path, "a", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        if new:
            writer.writeheader()
        writer.writerow(row)
