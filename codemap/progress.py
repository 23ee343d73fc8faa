"""Progress of a long step whose length is not known beforehand (the one-time ONNX export, the
multilingual model's conversion): a line on stderr counting the elapsed time, since no honest
estimate exists (the export took 193 s on a loaded 2-core machine, a fraction of that on a free
one). Steps over many items (embedding, the index build, ranking) use tqdm bars with an ETA."""
from __future__ import annotations

import contextlib
import sys
import threading
from typing import Iterator

from tqdm import tqdm


@contextlib.contextmanager
def elapsed(desc: str, enabled: bool, file=None) -> Iterator[None]:
    """Show `desc: 1m07s elapsed` on `file` (stderr), refreshed every second, while the block
    runs; nothing when `enabled` is False (--quiet, or stderr not a terminal)."""
    if not enabled:
        yield
        return
    bar = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed} elapsed",
               file=file or sys.stderr, leave=True, dynamic_ncols=True)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(1.0):
            bar.refresh()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        bar.close()
