"""The package layout holds: every module imports on its own, and no two modules import each other,
directly or round a circle (docs/architecture.md: the stages depend on earlier stages only)."""
import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import codemap

PACKAGE = Path(codemap.__file__).resolve().parent


def modules() -> dict[str, Path]:
    """Dotted name → file of every module in the codemap folder (a package by its __init__)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ("codemap", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path) -> set[str]:
    """The dotted names `name` imports, anywhere in the file (function-level imports too)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module → the codemap modules it needs loaded. Importing `a.b.c` runs `a/b/__init__.py`
    first, so a module also depends on the packages above what it imports (its own excepted:
    those are being imported already when it runs)."""
    known = modules()
    graph = defaultdict(set)
    for name, path in known.items():
        for target in imported(name, path):
            if target not in known:
                continue
            parts = target.split(".")
            for depth in range(2, len(parts) + 1):
                needed = ".".join(parts[:depth])
                if needed != name and not name.startswith(needed + "."):
                    graph[name].add(needed)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(graph) | set().union(*graph.values())):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The stages from ranking on ask the registry (codemap.domains: its __init__, base and evidence)
# what a domain knows; none imports a domain (a package under codemap/domains) by name.
REGISTRY_ASKERS = ("rank", "rerank", "evaluate", "decide", "review", "engines")


def domain_imports(name: str, path: Path) -> set[str]:
    """The domain modules (codemap.domains.<domain>[.…]) that module `name` at `path` imports."""
    domains = {p.name for p in (PACKAGE / "domains").iterdir() if (p / "__init__.py").is_file()}
    return {target for target in imported(name, path)
            if target.split(".")[:2] == ["codemap", "domains"] and len(target.split(".")) > 2
            and target.split(".")[2] in domains}


def test_stages_ask_the_registry_not_a_domain():
    named = {name: sorted(found) for name, path in modules().items()
             if name.split(".")[1:2] and name.split(".")[1] in REGISTRY_ASKERS
             and (found := domain_imports(name, path))}
    assert named == {}, f"import a domain by name instead of asking codemap.domains: {named}"


def test_the_domain_import_finder_finds_one(tmp_path):
    module = tmp_path / "stage.py"
    module.write_text("from ..domains import domain_of\nfrom ..domains.evidence import Evidence\n"
                      "def f():\n    from ..domains.lab.units import parse_unit\n"
                      "from ..domains import drug\nimport codemap.domains.lab\n", encoding="utf-8")
    assert domain_imports("codemap.review.stage", module) == {
        "codemap.domains.lab.units", "codemap.domains.lab.units.parse_unit",
        "codemap.domains.drug", "codemap.domains.lab"}


# Each module is imported with every codemap module forgotten first, so it gets no help from
# what an earlier import loaded; third-party packages stay loaded, which keeps this fast.
IMPORT_EACH = """
import importlib, sys, traceback
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m == "codemap" or m.startswith("codemap.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc(limit=-1).strip().splitlines()[-1])
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_module_imports_on_its_own():
    done = subprocess.run([sys.executable, "-c", IMPORT_EACH, *modules()], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_public_api_is_importable_from_the_top():
    from codemap import Encoder, VocabStore, load_target, map_codes, read_code_list  # noqa: F401

    assert set(codemap.__all__) >= {"map_codes", "read_code_list", "load_target", "Encoder",
                                    "VocabStore", "write_candidates", "CodemapError"}
    for name in codemap.__all__:
        assert getattr(codemap, name) is not None


def test_no_run_state_in_git():
    """Training checkpoints and optimiser states live outside the tree (docs/training.md): the
    only tracked weights are the shipped adapters in codemap/data/ and test fixtures."""
    tracked = subprocess.run(["git", "ls-files", "*.safetensors", "*.pt", "*.bin", "*.ckpt"],
                             cwd=PACKAGE.parent, capture_output=True, text=True)
    if tracked.returncode != 0:  # not a git checkout (an installed package): nothing to check
        return
    stray = [f for f in tracked.stdout.splitlines()
             if not f.startswith(("codemap/data/", "tests/"))]
    assert not stray, f"run state tracked in git: {stray[:5]}"
