"""The code base stays clean: ruff and mypy run as part of the suite, so CI enforces them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {
    "contracts": "contracts",
    "trajectory": "trajectory",
    "statemachine": "statemachine",
    "solver": "solver",
    "fuzz": "fuzz",
}


def _tool(name: str) -> str:
    candidate = Path(sys.executable).with_name(name)
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; install the test extras: pip install -e '.[test]'")
    return found


SOURCES = ("contracts", "trajectory", "statemachine", "solver", "fuzz", "envfactory", "tests", "bench")


@pytest.mark.parametrize("command", [("check",), ("format", "--check")], ids=["check", "format"])
def test_ruff_is_clean(command: tuple[str, ...]) -> None:
    """The lint rules, and the one layout ``ruff format`` gives the code."""
    result = subprocess.run(
        [_tool("ruff"), *command, "--no-cache", *SOURCES],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def package_tree(tmp: Path) -> Path:
    """The import package as mypy must see it: envfactory/ with the four layers inside.

    pyproject.toml maps the top-level folders into the package; mypy reads folders, so the
    mapping is rebuilt here with symbolic links.
    """
    pkg = tmp / "envfactory"
    pkg.mkdir()
    for entry in (ROOT / "envfactory").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for name, folder in LAYERS.items():
        (pkg / name).symlink_to(ROOT / folder)
    return pkg


def test_mypy_is_clean(tmp_path: Path) -> None:
    pkg = package_tree(tmp_path)
    env = dict(os.environ, MYPYPATH=str(tmp_path))
    result = subprocess.run(
        [
            _tool("mypy"),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "-p",
            "envfactory",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-8000:] + result.stderr[-2000:]
    assert pkg.exists()


def test_a_test_run_leaves_nothing_in_the_clone_or_the_temporary_folder(tmp_path: Path) -> None:
    """No Hypothesis database in the working tree, no folders left in the temporary directory
    by the modules that write contracts to disk."""
    import tempfile

    from hypothesis import HealthCheck, settings

    assert settings().database is None
    # nothing a property test decides reads the clock (a loaded CI machine would fail it)
    assert settings().deadline is None
    assert HealthCheck.too_slow in settings().suppress_health_check
    before = set(Path(tempfile.gettempdir()).glob("envfactory-*"))
    had_home = (ROOT / ".hypothesis").exists()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-x",
            "-k",
            "not slow",
            "tests/graph/test_graph_differential.py",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-2000:]
    assert set(Path(tempfile.gettempdir()).glob("envfactory-graph-*")) <= before
    assert had_home or not (ROOT / ".hypothesis").exists()
