"""A non-editable install gets everything: the wheel built from the tracked files holds every
module of codemap/, train/ (as codemap.train) and export/ (as codemap.export), every shipped data
file and training preset, and the build says nothing about packages it would leave out or
deprecated settings. About 3 s, so it runs by default."""
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from .conftest import REPO

# What the build must not say: setuptools' "Package would be ignored" / "absent from the
# `packages` configuration", and any deprecation (the TOML `project.license` table was one).
WARNINGS = re.compile(r"absent from the `packages`|would be ignored|Deprecat|Warning", re.I)


def tracked(*folders: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", "--", *folders], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def expected_in_wheel() -> set[str]:
    """Wheel paths of the tracked modules, data files and presets."""
    wanted = set()
    for path in tracked("codemap", "train", "export"):
        top, _, rest = path.partition("/")
        installed = path if top == "codemap" else f"codemap/{top}/{rest}"
        if path.endswith(".py") or path.startswith(("codemap/data/", "train/configs/")):
            wanted.add(installed)
    return wanted


def test_wheel_holds_every_module_and_data_file_and_builds_without_warnings(tmp_path):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs the git checkout")
    pytest.importorskip("setuptools", minversion="77")  # the pyproject's build requirement
    # Build a copy of the tracked files, so no build/ or egg-info left in the checkout (nor an
    # untracked file in it) can change what the wheel holds.
    source = tmp_path / "src"
    for path in tracked():
        if (REPO / path).is_file():
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / path, source / path)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "--no-index", "-v", "-w", str(tmp_path / "dist")],
        capture_output=True, text=True)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    said = sorted({line.strip() for line in output.splitlines()
                   if WARNINGS.search(line) and "byte-compiling is disabled" not in line})
    assert not said, "the build warns:\n" + "\n".join(said)
    wheel, = (tmp_path / "dist").glob("codemap-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(expected_in_wheel() - names)
    assert not missing, f"{len(missing)} files missing from the wheel: {missing[:20]}"
    assert "codemap/data/drugs/drug_targets.tsv" in names  # the built-in DRUGS target
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: Apache-2.0" in text
