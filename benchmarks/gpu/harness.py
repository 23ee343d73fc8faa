"""What one step of the GPU run is given (Context) and how it reports (partial results that
survive a kill).

A step runs in its own process (run_all.py starts it): a crash, a CUDA error or a hang there
costs that step only. It gets an absolute deadline, stops its loops before it, saves what it has
and returns a dict; everything it records on the way goes to a small JSON file, written whole each
time, that run_all.py reads back if the step has to be killed at its budget.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Context:
    """A step's settings: where to write, what to read, until when, and how small (rehearsal)."""

    out: Path  # the run's output folder ($OUT): few files, each small
    work: Path  # scratch space outside $OUT (the rebuilt model, temporary files)
    carry: Path  # the carried folder (.gpu/carry/, prepare_carry.py)
    model: Path  # the default model rebuilt from the carry (carry.materialise)
    deadline: float  # time.time() at which the step must have returned
    device: str = "cuda"
    rehearse: bool = False
    knobs: dict = field(default_factory=dict)  # per-step settings from the environment

    def left(self) -> float:
        """Seconds until the deadline."""
        return self.deadline - time.time()

    def knob(self, name: str, default, rehearsal=None):
        """A setting: GPU_<NAME> from the environment, else the rehearsal's or the real default."""
        value = self.knobs.get(name, os.environ.get(f"GPU_{name.upper()}"))
        if value is None:
            return rehearsal if self.rehearse and rehearsal is not None else default
        return type(default)(value) if not isinstance(default, bool) else str(value).lower() in ("1", "true", "yes")

    def as_dict(self) -> dict:
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


class Recorder:
    """A step's partial results, rewritten whole (atomically) at every `update`."""

    def __init__(self, path: Path):
        self.path, self.data = Path(path), {}

    def update(self, **values) -> None:
        self.data.update(values)
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps(self.data, indent=1, default=str), encoding="utf-8")
        tmp.replace(self.path)


def cuda_sync(device: str) -> None:
    """Wait for the GPU's queued work, so a wall-clock time covers it."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def peak_memory_gb(device: str) -> float | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return round(torch.cuda.max_memory_allocated() / 2**30, 2)
