"""The layer arrows of DESIGN.md hold: ``contracts`` <- ``trajectory`` <- ``statemachine`` <- ``solver``
<- ``fuzz`` <- top.

Every ``.py`` file of the four layer folders and of ``envfactory/`` is parsed with ``ast`` and EVERY
import is collected: module level and nested (a lazy import inside a function still ties the layers
together), ``import x`` and ``from x import y``, relative ones resolved. A layer may import itself
and the layers below it. ``contracts`` and ``trajectory`` import neither Z3 nor Hypothesis;
``statemachine`` does not import Hypothesis. A failure names ``file:line`` and the offending import.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent

# folder -> import package, as pyproject.toml maps them
FOLDERS = {
    "contracts": "envfactory.contracts",
    "trajectory": "envfactory.trajectory",
    "statemachine": "envfactory.statemachine",
    "solver": "envfactory.solver",
    "fuzz": "envfactory.fuzz",
    "envfactory": "envfactory",
}

# bottom first; a module may import from its own rank and below. ``trajectory`` (the file format:
# the model, the readers, the writers) is what every layer above speaks: the simulator and the
# walks build trajectories, BMC writes plans as trajectories, the fuzzer records findings in them.
RANK = {"contracts": 0, "trajectory": 1, "statemachine": 2, "solver": 3, "fuzz": 4, "top": 5}
LAYERS = ("contracts", "trajectory", "statemachine", "solver", "fuzz")

# third-party packages a layer must not import (by top-level package name)
FORBIDDEN = {
    "contracts": {"z3", "hypothesis"},
    "trajectory": {"z3", "hypothesis"},
    "statemachine": {"hypothesis"},
}

# The solver-free half of the state graph: its shape, the walks and findings read off a finished
# graph, the abstraction predicates, the export, the explicit-state baseline. Building the graph
# with Z3 is ``solver.graph``'s work and the Z3-answered findings are ``solver.reachability``'s.
SOLVER_FREE = [
    "envfactory.statemachine.abstraction",
    "envfactory.statemachine.export",
    "envfactory.statemachine.graph",
    "envfactory.statemachine.reachability",
]


@attrs.frozen(slots=True)
class Import:
    """One imported module: where the import statement is and what it brings in."""

    file: Path
    line: int
    module: str  # absolute module name (a submodule where ``from pkg import sub`` names one)
    name: str | None  # the name taken from ``module`` by ``from module import name``, else None
    text: str  # the statement as written

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def module_name(path: Path) -> str:
    """The import name of a file under one of FOLDERS."""
    rel = path.relative_to(ROOT)
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    parts[-1] = parts[-1].removesuffix(".py")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_files() -> list[Path]:
    files = []
    for folder in FOLDERS:
        files += [p for p in sorted((ROOT / folder).rglob("*.py")) if "__pycache__" not in p.parts]
    return files


MODULES = {module_name(p): p for p in package_files()}


def imports_in(source: str, file: Path, module: str, modules: dict[str, Path] = MODULES) -> Iterator[Import]:
    """Every import in ``source`` (of the module ``module``), however deeply nested."""
    is_package = file.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source, str(file))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(file, node.lineno, alias.name, None, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            written = f"from {'.' * node.level}{node.module or ''} import "
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in modules:
                    yield Import(file, node.lineno, sub, None, written + alias.name)
                else:
                    yield Import(file, node.lineno, target, alias.name, written + alias.name)


def all_imports() -> list[Import]:
    return [imp for name, path in MODULES.items() for imp in imports_in(path.read_text("utf-8"), path, name)]


def layer_of(module: str) -> str | None:
    """The layer an ``envfactory`` module belongs to; None for anything else (third party)."""
    for layer in LAYERS:
        if module == f"envfactory.{layer}" or module.startswith(f"envfactory.{layer}."):
            return layer
    if module == "envfactory" or module.startswith("envfactory."):
        return "top"
    return None


def rank_as_imported(module: str) -> int | None:
    """How high ``module`` sits when something imports it (None: not ours)."""
    layer = layer_of(module)
    return None if layer is None else RANK[layer]


def wrong_way(imports: list[Import]) -> list[str]:
    problems = []
    for imp in imports:
        here = layer_of(module_name(imp.file))
        assert here is not None
        there = rank_as_imported(imp.module)
        if there is not None and there > RANK[here]:
            problems.append(f"{imp.where}: `{imp.text}` ({here} -> {layer_of(imp.module)})")
    return problems


IMPORTS = all_imports()


def test_the_scan_sees_every_layer() -> None:
    for folder, package in FOLDERS.items():
        assert any(m == package or m.startswith(package + ".") for m in MODULES), folder
    # lazy imports are part of the picture: the package has many, and the scan must see them
    nested = [imp for imp in IMPORTS if imp.file.name != "__init__.py" and _is_nested(imp)]
    assert len(nested) > 10
    assert len(IMPORTS) > 200


def _is_nested(imp: Import) -> bool:
    return imp.line not in _top_level_import_lines(imp.file)


@functools.cache
def _top_level_import_lines(path: Path) -> frozenset[int]:
    tree = ast.parse(path.read_text("utf-8"))
    return frozenset(node.lineno for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


def test_dependencies_point_one_way() -> None:
    problems = wrong_way(IMPORTS)
    assert not problems, (
        "imports against the layer arrows (contracts <- trajectory <- statemachine <- solver <- fuzz <- top):\n  "
        + "\n  ".join(problems)
    )


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_forbidden_third_party_packages(layer: str) -> None:
    banned = FORBIDDEN[layer]
    problems = [
        f"{imp.where}: `{imp.text}`"
        for imp in IMPORTS
        if layer_of(module_name(imp.file)) == layer and imp.module.split(".")[0] in banned
    ]
    assert not problems, f"{layer} must not import {', '.join(sorted(banned))}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("module", SOLVER_FREE)
def test_the_state_graph_shape_needs_no_solver(module: str) -> None:
    assert module in MODULES
    problems = [
        f"{imp.where}: `{imp.text}`"
        for imp in IMPORTS
        if module_name(imp.file) == module
        and (imp.module.split(".")[0] == "z3" or (rank_as_imported(imp.module) or 0) > RANK["statemachine"])
    ]
    assert not problems, f"{module} must stay free of Z3 and the solver layer:\n  " + "\n  ".join(problems)


def test_every_envfactory_import_resolves() -> None:
    """Every imported ``envfactory`` module exists, and every name taken from one is bound at its
    top level; lazy imports of a moved name would otherwise only fail when the code path runs."""
    problems = unresolved(IMPORTS)
    assert not problems, "\n  ".join(["imports that do not resolve:", *problems])


def unresolved(imports: list[Import]) -> list[str]:
    problems = []
    for imp in imports:
        if layer_of(imp.module) is None:
            continue
        path = MODULES.get(imp.module)
        if path is None:
            problems.append(f"{imp.where}: `{imp.text}`: no module {imp.module}")
        elif imp.name not in (None, "*") and not {imp.name, "__getattr__"} & _top_level_names(path):
            problems.append(f"{imp.where}: `{imp.text}`: {imp.module} has no {imp.name!r}")
    return problems


@functools.cache
def _top_level_names(path: Path) -> frozenset[str]:
    """Names bound at the top level of a module (a module ``__getattr__`` answers any name)."""
    names: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, ast.If | ast.Try | ast.With):
                visit(node.body)
                visit(getattr(node, "orelse", []))
                visit(getattr(node, "finalbody", []))
                for handler in getattr(node, "handlers", []):
                    visit(handler.body)

    visit(ast.parse(path.read_text("utf-8")).body)
    return frozenset(names)


# ------------------------------------------------------------------- the scanner itself


def _scan(source: str, rel: str) -> list[Import]:
    path = ROOT / rel
    modules = dict(MODULES)
    modules.setdefault(module_name(path), path)
    return list(imports_in(source, path, module_name(path), modules))


def test_the_scanner_sees_nested_and_relative_imports() -> None:
    source = (
        "import z3\n"
        "from . import graph\n"
        "from .abstraction import predicates\n"
        "from .. import trajectory\n"
        "def f():\n"
        "    if True:\n"
        "        from envfactory.solver.bmc import cover\n"
        "class C:\n"
        "    def g(self):\n"
        "        import envfactory.fuzz.runner\n"
    )
    found = [(imp.line, imp.module, imp.name) for imp in _scan(source, "statemachine/_probe.py")]
    assert found == [
        (1, "z3", None),
        (2, "envfactory.statemachine.graph", None),
        (3, "envfactory.statemachine.abstraction", "predicates"),
        (4, "envfactory.trajectory", None),
        (7, "envfactory.solver.bmc", "cover"),
        (10, "envfactory.fuzz.runner", None),
    ]


def test_the_arrows_catch_a_lazy_upward_import() -> None:
    source = "def compile():\n    from envfactory.solver import transition as X\n    return X\n"
    problems = wrong_way(_scan(source, "statemachine/_probe.py"))
    assert problems == [
        "statemachine/_probe.py:2: `from envfactory.solver import transition` (statemachine -> solver)"
    ]
    assert wrong_way(_scan(source, "fuzz/_probe.py")) == []
    # the trajectory layer: fine from statemachine up, not from contracts
    use = "from envfactory.trajectory import Trajectory\n"
    assert wrong_way(_scan(use, "solver/_probe.py")) == []
    assert wrong_way(_scan(use, "contracts/_probe.py")) == [
        "contracts/_probe.py:1: `from envfactory.trajectory import Trajectory` (contracts -> trajectory)"
    ]
    # and the trajectory layer itself uses nothing above it
    assert wrong_way(_scan("from envfactory.statemachine import simulator\n", "trajectory/_probe.py")) != []
    # the top folder stays off-limits to the layers
    assert wrong_way(_scan("from envfactory.verification import verify\n", "fuzz/_probe.py")) != []


def test_the_resolver_catches_a_moved_name() -> None:
    stale = "def f():\n    from envfactory.statemachine.graph import compile\n"
    assert unresolved(_scan(stale, "fuzz/_probe.py")) == [
        "fuzz/_probe.py:2: `from envfactory.statemachine.graph import compile`: "
        "envfactory.statemachine.graph has no 'compile'"
    ]
    assert unresolved(_scan("import envfactory.solver.nowhere\n", "fuzz/_probe.py")) == [
        "fuzz/_probe.py:1: `import envfactory.solver.nowhere`: no module envfactory.solver.nowhere"
    ]
    fine = "from envfactory.solver.graph import compile\nfrom envfactory.solver import graph\n"
    assert unresolved(_scan(fine, "fuzz/_probe.py")) == []
