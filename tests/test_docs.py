"""Every example in README.md and docs/ runs, so the documentation cannot drift from the code.

Each fenced block is read by its language and shape: a native contract loads and ``check`` finds
nothing to warn about; an OpenAPI document loads; a trajectory verifies against the contract it
names; a Python block runs; an ``envfactory`` command line parses with the real CLI (options,
choices, files), and the ones that need no server, target or placeholder file run and exit as
documented. Blocks without a language (synopses, sample output) are prose.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
import yaml

from envfactory.cli import cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)

RUN = {"check", "verify", "plan", "prove", "graph", "generate"}
"""Commands whose README lines run for real (the others need a server, a target or a log)."""


def blocks(lang: str) -> Iterator[tuple[str, str]]:
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == lang:
                line = text[: match.start()].count("\n") + 1
                yield f"{path.relative_to(ROOT)}:{line}", match.group(2)


def _ids(items: list[tuple[str, str]]) -> list[str]:
    return [where for where, _ in items]


def _data(lang: str, *keys: str) -> list[tuple[str, str]]:
    out = []
    for where, body in blocks(lang):
        data = yaml.safe_load(body) if lang == "yaml" else json.loads(body)
        if isinstance(data, dict) and any(k in data for k in keys):
            out.append((where, body))
    return out


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


CONTRACTS = _data("yaml", "envfactory")


@pytest.mark.parametrize(("where", "body"), CONTRACTS, ids=_ids(CONTRACTS))
def test_native_contracts_check_without_findings(where: str, body: str, tmp_path: Path) -> None:
    path = tmp_path / "contract.yaml"
    path.write_text(body, encoding="utf-8")
    done = _cli("check", str(path), "--format", "json")
    assert done.returncode == 0, (where, done.stderr)
    assert json.loads(done.stdout)["findings"] == [], where


OPENAPI = _data("yaml", "openapi")


@pytest.mark.parametrize(("where", "body"), OPENAPI, ids=_ids(OPENAPI))
def test_openapi_documents_load(where: str, body: str, tmp_path: Path) -> None:
    path = tmp_path / "api.yaml"
    path.write_text(body, encoding="utf-8")
    done = _cli("check", str(path))
    assert done.returncode == 0, (where, done.stderr)


WITH = [(w, b) for w, b in _data("yaml", "operations") if "envfactory" not in yaml.safe_load(b)]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"file_name": {"type": "string"}},
                "required": ["file_name"],
            },
        },
    }
    for name in ("touch", "cat")
]


@pytest.mark.parametrize(("where", "body"), WITH, ids=_ids(WITH))
def test_with_files_join_a_tool_list(where: str, body: str, tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (tmp_path / "state.yaml").write_text(body, encoding="utf-8")
    done = _cli("check", str(tmp_path / "tools.json"), "--with", str(tmp_path / "state.yaml"))
    assert done.returncode == 0, (where, done.stderr)


TRAJECTORIES = _data("json", "steps")


@pytest.mark.parametrize(("where", "body"), TRAJECTORIES, ids=_ids(TRAJECTORIES))
def test_trajectories_verify_against_the_contract_they_name(where: str, body: str, tmp_path: Path) -> None:
    data = json.loads(body)
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    done = _cli("verify", str(ROOT / data["contract"]), str(path), "--format", "json")
    assert done.returncode == 0, (where, done.stdout, done.stderr)


PYTHON = list(blocks("python"))


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("where", "body"), PYTHON, ids=_ids(PYTHON))
def test_python_blocks_run(where: str, body: str, tmp_path: Path) -> None:
    """Each block runs in a folder with the files it names: the bundled examples, ``runs.jsonl``
    (the bank's trajectories) and ``logs.jsonl`` (an OpenAI chat log)."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    shutil.copy(ROOT / "examples" / "bank" / "trajectories.jsonl", tmp_path / "runs.jsonl")
    shutil.copy(
        ROOT / "tests" / "importers" / "fixtures" / "openai_chat_finetune.jsonl", tmp_path / "logs.jsonl"
    )
    script = tmp_path / "block.py"
    script.write_text(body, encoding="utf-8")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, (where, done.stderr[-2000:])


COMMANDS = [
    (where, line.split("#")[0].strip())
    for where, body in blocks("bash")
    for line in body.splitlines()
    if line.startswith("envfactory ")
]


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[f"{w}:{c.split()[1]}" for w, c in COMMANDS])
def test_command_lines_parse_and_the_offline_ones_run(
    where: str, line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = shlex.split(line)[1:]
    # a file the line names that does not exist yet is a placeholder (your own log, an output)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    placeholders = False
    for before, word in zip(["", *words], words):
        if before in ("-o", "--output"):
            continue  # an output the command writes
        if re.fullmatch(r"[\w./-]+\.(yaml|json|jsonl|py|mmd)", word) and not (tmp_path / word).exists():
            (tmp_path / word).write_text("{}\n", encoding="utf-8")
            placeholders = True
    monkeypatch.chdir(tmp_path)
    command = cli.get_command(click.Context(cli), words[0])
    assert command is not None, (where, words[0])
    command.make_context(words[0], list(words[1:]))  # raises on an unknown option or choice
    if words[0] in RUN and not placeholders:
        done = _cli(*words, cwd=tmp_path)
        allowed = {0, 1} if words[0] == "verify" else {0}  # the bundled runs are broken on purpose
        assert done.returncode in allowed, (where, done.stderr)
