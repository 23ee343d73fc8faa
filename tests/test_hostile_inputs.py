"""Hostile files through the real CLI: each is refused with one short line, exit code 2 and no
output, in bounded time and memory (loose bounds: the machine may be loaded; the figures at the
reported sizes come from benchmarks/inputs/hostile_inputs.py)."""
import pytest

from .hostile_files import HOSTILE, refuse

SECONDS, MEGABYTES, LINE = 60, 1024, 300


@pytest.mark.parametrize("kind", HOSTILE)
def test_hostile_file_is_refused_in_bounded_time_and_memory(tmp_path, kind):
    name, _, make = HOSTILE[kind]
    found = refuse(make(tmp_path / name), tmp_path)
    stderr = found["stderr"]
    assert found["exit_code"] == 2, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("codemap: error: ") and len(lines[0]) <= LINE, lines
    assert "Traceback" not in stderr and not found["output_written"]
    assert not list(tmp_path.glob(".out.csv*"))
    assert found["seconds"] < SECONDS and found["peak_mb"] < MEGABYTES, found
