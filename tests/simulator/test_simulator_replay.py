"""`envfactory replay`: generated files replay cleanly; tampered recordings and bad targets differ."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import envfactory
from envfactory.server import running
from envfactory.statemachine.walk import generate
from envfactory.trajectory import write_trajectories

ROOT = Path(__file__).resolve().parents[2]
BANK = ROOT / "examples" / "bank" / "bank.yaml"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_generated_file_replays_without_differences_and_tampering_is_found(tmp_path: Path) -> None:
    contract = envfactory.load(ROOT / "examples" / "petstore" / "petstore.yaml")
    path = tmp_path / "gen.jsonl"
    write_trajectories(path, generate(contract, 25, seed=4))
    clean = run(
        "replay", str(ROOT / "examples" / "petstore" / "petstore.yaml"), str(path), "--format", "json"
    )
    assert clean.returncode == 0, clean.stdout[-2000:] + clean.stderr
    doc = json.loads(clean.stdout)
    assert doc["summary"] == {"replayed": 25, "differing": 0, "skipped": 0, "unreadable": 0}

    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    step = next(i for i, s in enumerate(first["steps"]) if isinstance(s.get("output"), dict))
    first["steps"][step]["output"] = {"tampered": True}
    lines[0] = json.dumps(first)
    lines.append("{broken")
    path.write_text("\n".join(lines) + "\n")
    dirty = run(
        "replay", str(ROOT / "examples" / "petstore" / "petstore.yaml"), str(path), "--format", "json"
    )
    assert dirty.returncode == 1
    doc = json.loads(dirty.stdout)
    assert doc["summary"]["differing"] == 1 and doc["summary"]["unreadable"] == 1
    (diff,) = doc["trajectories"][0]["differences"]
    assert (diff["step"], diff["against"], diff["kind"]) == (step, "recording", "output")


def test_example_file_reports_recorded_lies_and_skips_holes() -> None:
    result = run("replay", str(BANK), str(ROOT / "examples" / "bank" / "trajectories.jsonl"))
    assert result.returncode == 1
    assert "wrong-balance-reported" in result.stdout and "skipped" in result.stdout


def test_replay_against_the_mock_server_and_a_python_target(tmp_path: Path) -> None:
    contract = envfactory.load(BANK)
    path = tmp_path / "bank.jsonl"
    write_trajectories(path, generate(contract, 10, seed=1))
    with running(contract) as url:
        result = run("replay", str(BANK), str(path), "--target", url)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr

    impl = tmp_path / "leaky_bank.py"
    impl.write_text(
        "class Bank:\n"
        "    def __init__(self):\n        self.accounts = {}\n"
        "    def open(self, account, owner):\n        self.accounts[account] = 0\n"
        "    def deposit(self, account, amount):\n"
        "        self.accounts[account] = self.accounts.get(account, 0) + amount\n"
        "        return {'balance': self.accounts[account] + 1}\n"
        "    def balance(self, account):\n        return {'balance': self.accounts[account]}\n"
        "    def transfer(self, source, target, amount):\n"
        "        self.accounts[source] -= amount\n        self.accounts[target] += amount\n"
        "    def freeze(self, account):\n        pass\n"
        "    def close(self, account):\n        del self.accounts[account]\n"
    )
    result = run("replay", str(BANK), str(path), "--target", f"python:{impl}:Bank", "--format", "json")
    assert result.returncode == 1, result.stderr
    kinds = {
        (d["against"], d["kind"]) for t in json.loads(result.stdout)["trajectories"] for d in t["differences"]
    }
    assert ("contract", "postcondition") in kinds


def test_openapi_trajectories_replay_on_the_mock_server_with_their_seeds(tmp_path: Path) -> None:
    spec = Path(__file__).parent / "pets_openapi.yaml"
    contract = envfactory.load(spec)
    path = tmp_path / "pets.jsonl"
    write_trajectories(path, generate(contract, 12, seed=2))
    with running(contract) as url:
        result = run("replay", str(spec), str(path), "--target", url, "--format", "json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    assert json.loads(result.stdout)["summary"]["differing"] == 0
