"""The wheel a pip user installs is complete: the examples ship inside it, and so does the LICENSE.

The wheel is built from a copy of the source (so the clone gets no build/ folder), without build
isolation (setuptools comes with the test extras, so no network is needed), and installed with
``--no-deps`` into a fresh virtualenv; the test environment's site-packages stands in for the
dependencies (on PYTHONPATH, which does not read its ``.pth`` files, so the editable install of
the checkout stays out of sight). Then ``envfactory demo`` runs from an unrelated folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = [
    "contracts",
    "trajectory",
    "statemachine",
    "solver",
    "fuzz",
    "envfactory",
    "examples",
    "pyproject.toml",
    "README.md",
    "LICENSE",
]


@pytest.mark.timeout(600)
def test_the_built_wheel_installs_and_runs_the_demo(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCE:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(path, source / name)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("envfactory-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "envfactory/examples/bank/bank.yaml" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)

    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    deps = sysconfig.get_paths()["purelib"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    isolated = {"PYTHONPATH": deps, "PATH": "/usr/bin:/bin", "COLUMNS": "160"}
    result = subprocess.run(
        [python, "-m", "envfactory", "demo"],
        cwd=elsewhere,
        env=isolated,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "envfactory/examples/bank/bank.yaml" in result.stdout  # read from inside the wheel
    assert "open-deposit-transfer" in result.stdout and "overdraft" in result.stdout
    located = subprocess.run(
        [python, "-c", "import envfactory; print(envfactory.__file__)"],
        cwd=elsewhere,
        env=isolated,
        capture_output=True,
        text=True,
    )
    assert located.returncode == 0, located.stderr
    assert str(env) in located.stdout  # the wheel, not the checkout
