"""Start-up stays lean: ``verify`` of a concrete file loads no Z3, Hypothesis or Faker, the command
group imports a command's module only when it runs, and ``import envfactory`` loads names on use
(issue 17 items 4 and 7). Checked through ``sys.modules`` in a fresh interpreter, never by time."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

import envfactory
from envfactory.cli import COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("z3", "hypothesis", "faker", "jsonschema")  # jsonschema: a valid contract needs no explaining

_PROBE = """
import json, sys
from envfactory.cli import main
try:
    main({args!r})
except SystemExit as exit:
    code = exit.code
print(json.dumps({{"code": code, "modules": sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})}}))
"""


def _modules_after(args: list[str], cwd: Path) -> tuple[int, list[str]]:
    code = _PROBE.format(args=args, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300, check=False
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], report["modules"]


def test_verify_of_a_concrete_file_imports_no_solver_fuzzer_or_faker(tmp_path: Path) -> None:
    contract = ROOT / "examples" / "tickets" / "tickets.yaml"
    lines = [
        line
        for line in (ROOT / "examples" / "tickets" / "trajectories.jsonl").read_text("utf-8").splitlines()
        if "$var" not in line
    ]
    assert len(lines) >= 2  # valid and invalid ones: the failure report is rendered too
    concrete = tmp_path / "concrete.jsonl"
    concrete.write_text("\n".join(lines) + "\n", "utf-8")
    code, heavy = _modules_after(["verify", str(contract), str(concrete)], tmp_path)
    assert code in (0, 1)
    assert heavy == []
    # the probe can see them: a file with a hole goes to Z3
    holed = [
        line
        for line in (ROOT / "examples" / "tickets" / "trajectories.jsonl").read_text("utf-8").splitlines()
    ]
    (tmp_path / "holed.jsonl").write_text("\n".join(holed) + "\n", "utf-8")
    _, heavy = _modules_after(["verify", str(contract), str(tmp_path / "holed.jsonl")], tmp_path)
    assert "z3" in heavy


def test_help_imports_no_command_module(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom envfactory.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('envfactory.cli.', 'envfactory.contracts', "
        "'jsonschema', 'rich', 'z3'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip().splitlines()[-1] == "['envfactory.cli._common']"


def test_the_lazy_help_lists_what_the_commands_say() -> None:
    """The short help in ``COMMANDS`` is the one each command gives itself: the same --help page as
    a group that imports every command eagerly."""
    eager = click.Group("envfactory", help=cli.help, params=cli.params, context_settings=cli.context_settings)
    for name in COMMANDS:
        command = cli.get_command(click.Context(cli), name)
        assert command is not None and command.help is not None
        assert command.help.startswith(COMMANDS[name][1])
        eager.add_command(command, name)
    runner = CliRunner()
    for width in (60, 80, 200):
        lazy_page = runner.invoke(cli, ["--help"], prog_name="envfactory", terminal_width=width).output
        assert (
            lazy_page == runner.invoke(eager, ["--help"], prog_name="envfactory", terminal_width=width).output
        )
    assert sorted(COMMANDS) == sorted(eager.commands)


def test_import_envfactory_loads_names_on_use(tmp_path: Path) -> None:
    """Only package namespaces load with ``import envfactory`` (the statemachine's hook for the
    solver is installed there, a function that imports on call): no loader, verifier or Z3."""
    code = (
        "import sys, envfactory\n"
        "print(sorted(m for m in sys.modules if m.startswith(('envfactory.', 'z3', 'jsonschema', 'rich'))))\n"
        "import envfactory.verification\n"
        "print(callable(envfactory.verify), envfactory.verify.__module__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    before, after = done.stdout.strip().splitlines()
    loaded = ast.literal_eval(before)
    assert not [m for m in loaded if m.count(".") > 1 or not m.startswith("envfactory.")], loaded
    assert "envfactory.verification" not in loaded and "envfactory.contracts" not in loaded
    assert after == "True envfactory.verification"


def test_every_public_name_resolves() -> None:
    for name in envfactory.__all__:
        assert getattr(envfactory, name) is not None, name
    assert set(envfactory.__all__) <= set(dir(envfactory))


def test_verify_of_a_native_file_loads_no_importer(tmp_path: Path) -> None:
    """``--input-format auto`` (the default) tells a native file by its first record without the
    importers package (a dozen vendor formats: about 10 ms of a run's start-up)."""
    contract = ROOT / "examples" / "tickets" / "tickets.yaml"
    native = ROOT / "examples" / "tickets" / "trajectories.jsonl"
    code = (
        "import json, sys\nfrom envfactory.cli import main\ntry:\n"
        f"    main(['verify', {str(contract)!r}, {str(native)!r}])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('envfactory.importers'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
