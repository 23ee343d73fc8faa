"""Everything issue #55 asks of a lent GPU, in one run: each step in its own process, with its own
time budget, after its prerequisites are checked; raw results into one folder.

    bash benchmarks/gpu/run_all.sh OUT                 # on the GPU machine ($OUT)
    bash benchmarks/gpu/run_all.sh OUT --rehearse      # here: CPU, tiny budgets and batches

Steps, in order of value (benchmarks/gpu/README.md says what each measures):

    prepare        what the machine has (torch, CUDA, onnxruntime's providers, packages, the
                   carry), then the default model rebuilt from the carry (carry.materialise)
    cross_encoder  the second stage's cross-encoder trained in bf16       (step_cross_encoder.py)
    coder          CODER bi-encoder training steps/s at two batch sizes    (step_coder.py)
    inference      the default model's terms/s in bf16/fp16, parity to CPU (step_inference.py)
    scale          426k / 1.4M names embedded, full index vs two-stage pool (step_scale.py)

A step whose prerequisite is missing is skipped with the reason. A step that fails or overruns
costs only itself: it runs in a child process that gets an absolute deadline, and is killed a
few seconds after it; what it recorded until then is kept. OUT gets few files: results.json
(rewritten after every step and every few seconds during one), log.txt (run_all.sh) and the
cross-encoder's folder (cross_encoder/: adapter, manifest, checkpoint).

Budgets are wall-clock seconds, from the environment: GPU_BUDGET_TOTAL (default 540: the run
ends by then, whatever the steps' own budgets say) and GPU_BUDGET_<STEP> (PREPARE 60,
CROSS_ENCODER 285, CODER 115, INFERENCE 55, SCALE 120); a step gets the smaller of its own and
what is left of the total (so the scale step gets what the others left, about 70 s). GPU_STEPS=cross_encoder,scale runs only those (prepare always runs).
Each step's own settings are GPU_<KNOB> variables (README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = "results.json"
STEPS = ("prepare", "cross_encoder", "coder", "inference", "scale")
BUDGETS = {"total": 540, "prepare": 60, "cross_encoder": 285, "coder": 115, "inference": 55,
           "scale": 120}
# A rehearsal's budgets: the steps stop on their (tiny) step counts well before these.
REHEARSAL_BUDGETS = {"total": 300, "prepare": 60, "cross_encoder": 60, "coder": 45,
                     "inference": 75, "scale": 45}
GRACE = 10  # seconds a step may overrun its deadline (saving) before it is killed
# What each step needs: keys of the prepare step's findings that must be true.
NEEDS = {
    "cross_encoder": ("device", "model", "peft", "pyarrow", "carry:pairs"),
    "coder": ("device", "model", "peft", "carry:kg.npz"),
    "inference": ("device", "model", "carry:kg.npz"),
    "scale": ("device", "model", "pyarrow", "carry:scale.npz", "carry:scale_queries.parquet"),
}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)


# --- the parent: plan, check, start each step, collect ----------------------------------------------

def budgets(rehearse: bool) -> dict:
    base = REHEARSAL_BUDGETS if rehearse else BUDGETS
    return {k: float(os.environ.get(f"GPU_BUDGET_{k.upper()}", v)) for k, v in base.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rehearse", action="store_true",
                        default=os.environ.get("GPU_REHEARSE", "") not in ("", "0"))
    parser.add_argument("--carry", type=Path, default=Path(os.environ.get("GPU_CARRY", ROOT / ".gpu" / "carry")))
    parser.add_argument("--work", type=Path, default=Path(os.environ.get(
        "GPU_WORK", Path(os.environ.get("TMPDIR", "/tmp")) / "codemap-gpu-work")))
    parser.add_argument("--steps", default=os.environ.get("GPU_STEPS", ",".join(STEPS[1:])))
    parser.add_argument("--step", help=argparse.SUPPRESS)  # a child: run this one step
    parser.add_argument("--context", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        return child(args.step, json.loads(args.context))
    return parent(args)


def parent(args) -> int:
    out, carry, work = args.out.resolve(), args.carry.resolve(), args.work.resolve()
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    limits = budgets(args.rehearse)
    start = time.time()
    end = start + limits["total"]
    wanted = [s for s in args.steps.split(",") if s]
    unknown = sorted(set(wanted) - set(STEPS))
    results = {"run": {"started": now(), "rehearse": args.rehearse, "budgets_s": limits,
                       "host": socket.gethostname(), "python": sys.version.split()[0],
                       "platform": platform.platform(), "carry": str(carry), "work": str(work),
                       "steps_asked": wanted, "unknown_steps": unknown,
                       "env": {k: v for k, v in os.environ.items() if k.startswith("GPU_")}},
               "steps": {s: {"status": "pending"} for s in STEPS}}
    path = out / RESULTS
    write_json(path, results)
    print(f"run_all: {'rehearsal' if args.rehearse else 'GPU run'}, budget {limits['total']:.0f} s, "
          f"out {out}", flush=True)
    found: dict = {}
    for name in STEPS:
        entry = results["steps"][name]
        if name != "prepare" and name not in wanted:
            entry.update(status="skipped", reason="not asked for (GPU_STEPS / --steps)")
            write_json(path, results)
            continue
        missing = [need for need in NEEDS.get(name, ()) if not found.get(need)]
        if missing:
            entry.update(status="skipped", reason="missing: " + ", ".join(
                f"{m} ({found.get('why', {}).get(m, 'not found')})" for m in missing))
            print(f"run_all: {name} skipped: {entry['reason']}", flush=True)
            write_json(path, results)
            continue
        left = end - time.time()
        budget = min(limits[name], left)
        if budget < 15:
            entry.update(status="skipped", reason=f"time: {left:.0f} s of the total left")
            write_json(path, results)
            continue
        context = {"out": str(out), "work": str(work), "carry": str(carry),
                   "model": str(work / "model"), "deadline": time.time() + budget,
                   "device": "cpu" if args.rehearse else "cuda", "rehearse": args.rehearse}
        entry.update(status="running", budget_s=round(budget, 1), started=now())
        write_json(path, results)
        print(f"run_all: {name} started, budget {budget:.0f} s", flush=True)
        status, seconds, record = launch(name, context, budget, results, path, entry)
        entry.update(status=status, seconds=round(seconds, 1))
        if status.startswith("stopped"):
            entry["reason"] = (f"still running {GRACE} s after its deadline: killed; what it had "
                               f"recorded is kept")
        error = record.pop("error", None)
        if error:
            entry["error"] = error
        entry["result"] = record
        if name == "prepare":
            found = record.get("found", {}) if status == "ran" else {}
            results["prerequisites"] = record
        print(f"run_all: {name} {status} in {seconds:.0f} s", flush=True)
        write_json(path, results)
    results["run"].update(finished=now(), total_s=round(time.time() - start, 1))
    results["summary"] = {name: {"status": e["status"], "seconds": e.get("seconds"),
                                 "reason": e.get("reason") or (e.get("error") or {}).get("message")}
                          for name, e in results["steps"].items()}
    write_json(path, results)
    for stale in out.glob("*.part"):
        stale.unlink()
    print("run_all: done\n" + json.dumps(results["summary"], indent=1), flush=True)
    return 0


def launch(name: str, context: dict, budget: float, results: dict, path: Path, entry: dict):
    """Run one step in a child process until it exits or overruns; (status, seconds, record)."""
    partial = Path(context["work"]) / f"step-{name}.json"
    partial.unlink(missing_ok=True)
    context["record"] = str(partial)
    started = time.time()
    process = subprocess.Popen([sys.executable, str(Path(__file__)), str(context["out"]),
                                "--step", name, "--context", json.dumps(context)],
                               # its own process group (killed whole at the budget), not its
                               # own session: the device ends a command's sessions with it
                               cwd=str(ROOT), process_group=0)
    status = None
    while status is None:
        try:
            code = process.wait(timeout=3)
            status = "ran" if code == 0 else f"failed (exit {code})"
        except subprocess.TimeoutExpired:
            if time.time() > context["deadline"] + GRACE:
                _kill(process)
                status = "stopped at its budget (killed)"
            else:  # keep results.json current: a kill of the whole run keeps this much
                entry["result"] = _read(partial)
                write_json(path, results)
    return status, time.time() - started, _read(partial)


def _kill(process) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def _read(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


# --- a child: one step ------------------------------------------------------------------------------

def child(name: str, context: dict) -> int:
    sys.path.insert(0, str(HERE))
    import env

    stubs = env.setup(rehearse=context["rehearse"])
    from harness import Context, Recorder

    os.environ.setdefault("CODEMAP_CACHE_DIR", str(Path(context["work"]) / "cache"))
    os.environ.setdefault("CODEMAP_MODEL_CACHE", str(Path(context["work"]) / "cache" / "models"))
    record = Recorder(Path(context.pop("record")))
    ctx = Context(out=Path(context["out"]), work=Path(context["work"]), carry=Path(context["carry"]),
                  model=Path(context["model"]), deadline=context["deadline"],
                  device=context["device"], rehearse=context["rehearse"])
    record.update(import_setup=stubs)
    try:
        if name == "prepare":
            result = prepare(ctx, record)
        else:
            module = __import__(f"step_{name}")
            result = module.run(ctx, record)
        record.update(**result)
        return 0
    except BaseException as exc:  # recorded for results.json, then the child fails loudly
        record.update(error={"type": type(exc).__name__, "message": str(exc)[:2000],
                             "traceback": traceback.format_exc()[-4000:]})
        raise


def prepare(ctx, record) -> dict:
    """What the machine has, then the default model rebuilt from the carry."""
    import importlib
    import importlib.metadata
    import shutil

    import env

    found: dict = {}
    why: dict = {}
    packages = {}
    for package in ("torch", "transformers", "tokenizers", "peft", "safetensors", "pandas",
                    "pyarrow", "numpy", "scipy", "scikit-learn", "onnx", "onnxruntime",
                    "onnxscript", *env.DEVICE_MISSING):
        module = {"scikit-learn": "sklearn"}.get(package, package)
        if not env.available(module):  # blocked in a rehearsal, or not installed
            packages[package] = None
            continue
        try:  # the installed version, without importing (some imports take seconds)
            packages[package] = importlib.metadata.version(package.replace("_", "-"))
        except importlib.metadata.PackageNotFoundError:
            packages[package] = "present"
    for package in ("transformers", "peft"):  # the two the steps cannot do without: imported
        if packages.get(package):
            try:
                importlib.import_module(package)
            except Exception as exc:  # a broken install is a finding, not a crash
                packages[package] = f"import failed: {type(exc).__name__}: {exc}"[:300]
    found["peft"] = bool(packages.get("peft")) and "failed" not in packages["peft"]
    found["pyarrow"] = bool(packages.get("pyarrow")) and "failed" not in packages["pyarrow"]
    why.update(peft="peft is not installed", pyarrow="pyarrow is not installed")
    record.update(packages=packages)

    import torch

    gpu = {"torch": torch.__version__, "cuda_build": torch.version.cuda,
           "cuda_available": torch.cuda.is_available()}
    if gpu["cuda_available"]:
        props = torch.cuda.get_device_properties(0)
        gpu.update(name=props.name, capability=f"{props.major}.{props.minor}",
                   memory_gb=round(props.total_memory / 2**30, 1),
                   multiprocessors=props.multi_processor_count,
                   bf16=torch.cuda.is_bf16_supported(), devices=torch.cuda.device_count())
        x = torch.ones(1024, 1024, device="cuda", dtype=torch.bfloat16)
        gpu["bf16_matmul_ok"] = bool(torch.isfinite((x @ x).float()).all())
    gpu["nvidia_smi"] = _nvidia_smi()
    found["device"] = ctx.device == "cpu" if ctx.rehearse else gpu["cuda_available"]
    why["device"] = "torch sees no CUDA GPU" if not ctx.rehearse else "rehearsal runs on the CPU"
    try:
        import onnxruntime

        gpu["onnxruntime_providers"] = onnxruntime.get_available_providers()
    except ImportError:
        gpu["onnxruntime_providers"] = None
    record.update(gpu=gpu)

    carry = {}
    for part in ("model.npz", "card.json", "pairs", "kg.npz", "scale.npz",
                 "scale_queries.parquet"):
        path = ctx.carry / part
        if path.is_dir():
            files = sorted(path.glob("*.parquet"))
            carry[part] = {"files": [f.name for f in files],
                           "bytes": sum(f.stat().st_size for f in files)}
            found[f"carry:{part}"] = bool(files)
        else:
            carry[part] = {"bytes": path.stat().st_size} if path.exists() else None
            found[f"carry:{part}"] = path.exists()
        why[f"carry:{part}"] = f"{path} is not in the carry (benchmarks/gpu/prepare_carry.py)"
    record.update(carry=carry, carry_card=_read(ctx.carry / "card.json"))

    if found["carry:model.npz"]:
        from carry import materialise

        clock = time.time()
        shutil.rmtree(ctx.model, ignore_errors=True)
        folder = materialise(ctx.carry, ctx.model)
        found["model"] = (folder / "codemap.json").exists()
        record.update(model={"folder": str(folder), "seconds": round(time.time() - clock, 1),
                             "manifest": _read(folder / "codemap.json")})
    why["model"] = "the default model could not be rebuilt from the carry (see prepare)"
    found["why"] = why
    return {"found": found}


def _nvidia_smi() -> str | None:
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,"
                               "clocks.max.sm,power.limit", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20)
        return done.stdout.strip() or done.stderr.strip()[:300]
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"not run: {exc}"[:200]


if __name__ == "__main__":
    sys.exit(main())
