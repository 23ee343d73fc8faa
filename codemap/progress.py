"""Progress of long steps, for a person at a terminal and for a log alike.

On a terminal a step over items (embedding, the index build, ranking) shows a tqdm bar with an
ETA, and a step of unknown length (the one-time ONNX export, the multilingual conversion) a line
counting the elapsed time. Anywhere else (a pipe, a log file, a scheduler) a bar would be
hundreds of carriage returns, and nothing at all leaves a log silent for minutes: such a step
writes one line when it starts, one every LOG_EVERY seconds with the elapsed time and, where the
total is known, the share done, and one when it ends. No duration is promised: none was measured
for the user's machine.
"""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Iterator

from tqdm import tqdm

LOG_EVERY = 30.0  # seconds between the lines a logged step writes
MIN_LOGGED = 2.0  # steps that end sooner write no closing line


def on_terminal(file=None) -> bool:
    return bool(getattr(file or sys.stderr, "isatty", lambda: False)())


class _LogLines:
    """tqdm's update/close/set_postfix_str for a step off a terminal: a line at the start, every
    LOG_EVERY seconds and at the end (if it ran MIN_LOGGED seconds or more)."""

    def __init__(self, total: int | None, desc: str, unit: str, file=None, initial: int = 0):
        self.total, self.desc, self.unit, self.file = total, desc, unit, file or sys.stderr
        self.n, self.postfix = initial, ""
        self.started = self.last = time.monotonic()
        self._write(f"{desc}: started" + (f" ({total:,} {unit}s)" if total else ""))

    def _write(self, line: str) -> None:
        print(f"codemap: {line}", file=self.file, flush=True)

    def _state(self) -> str:
        seconds = time.monotonic() - self.started
        done = (f", {self.n:,} of {self.total:,} {self.unit}s ({self.n / self.total:.0%})"
                if self.total else "")
        return f"{self.desc}: {_clock(seconds)} elapsed{done}{self.postfix}"

    def update(self, n: int = 1) -> None:
        self.n += n
        if time.monotonic() - self.last >= LOG_EVERY:
            self.last = time.monotonic()
            self._write(self._state())

    def tick(self) -> None:
        self.update(0)

    def set_postfix(self, **values) -> None:
        self.postfix = "; " + ", ".join(f"{k} {v}" for k, v in values.items()) if values else ""

    def close(self) -> None:
        if time.monotonic() - self.started >= MIN_LOGGED:
            self._write(self._state().replace(" elapsed", "", 1) + " — done")

    def __enter__(self) -> "_LogLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(seconds), 60)
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def bar(total: int | None, desc: str, unit: str, enabled: bool, file=None, **options):
    """A progress bar over `total` items (tqdm on a terminal, log lines elsewhere; `enabled`
    False: silent, as with --quiet)."""
    if enabled and not on_terminal(file):
        return _LogLines(total, desc, unit, file, options.get("initial", 0))
    return tqdm(total=total, desc=desc, unit=unit, disable=not enabled, file=file, **options)


@contextlib.contextmanager
def elapsed(desc: str, enabled: bool, file=None) -> Iterator[None]:
    """A step of unknown length: `desc: 1m07s elapsed` refreshed every second on a terminal,
    log lines elsewhere (see the module docstring); nothing when `enabled` is False."""
    if not enabled:
        yield
        return
    terminal = on_terminal(file)
    shown = (tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed} elapsed",
                  file=file or sys.stderr, leave=True, dynamic_ncols=True) if terminal
             else _LogLines(None, desc, "", file))
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(min(1.0, LOG_EVERY)):
            shown.refresh() if terminal else shown.tick()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        shown.close()
