"""Bad input on the command line: one line naming the place, exit code 2, no traceback unless --debug."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "bank" / "bank.yaml"


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envfactory.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_check_on_a_good_contract_exits_zero() -> None:
    result = run("check", str(EXAMPLE))
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (
            'envfactory: "1"\noperations: {op: {}}\nstate: {x: {type: integer, initial: 0}}\ninvariants: [y > 0]\n',
            ":4:",
        ),
        ("envfactory: '1'\noperations: {op: {requires: [1 +]}}\n", ":2:"),
        ("a: !!python/object/apply:os.system ['true']\n", ":1:"),
        ("envfactory: '1'\noperations: {op: {}}\nbogus: 1\n", ":3:1:"),
    ],
)
def test_broken_contract_is_one_located_line(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(content)
    result = run("check", str(path))
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert str(path) + needle in lines[0]
    assert "Traceback" not in result.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("envfactory: '1'\nbogus: 1\n")
    result = run("--debug", "check", str(path))
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_missing_file_and_wrong_option() -> None:
    missing = run("check", "no/such/file.yaml")
    assert missing.returncode == 2 and "no/such/file.yaml" in missing.stderr
    wrong = run("check", str(EXAMPLE), "--no-such-option")
    assert wrong.returncode == 2
    assert len([line for line in wrong.stderr.splitlines() if line.strip()]) == 1
    unknown = run("no-such-command")
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr


def test_a_bug_is_one_line_and_exit_70_never_a_finding(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An exception envfactory did not expect is its own bug: one line that says so and exit 70,
    not Python's 1 (which ``verify`` uses for "a trajectory is invalid", so a CI job would read
    the crash as a finding); ``--debug`` raises it."""
    import envfactory.cli.check as check
    from envfactory.cli import main

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(check, "lint", broken)
    with pytest.raises(SystemExit) as code:
        main(["check", str(EXAMPLE)])
    assert code.value.code == 70
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.strip()] == [
        "envfactory: error: internal error (RuntimeError: boom); this is a bug in envfactory: "
        "please report it with the output of --debug"
    ]
    with pytest.raises(RuntimeError, match="boom"):
        main(["--debug", "check", str(EXAMPLE)])
    with pytest.raises(RuntimeError, match="boom"):  # where a user adds it: after the command
        main(["check", str(EXAMPLE), "--debug"])


def test_every_control_and_format_character_is_escaped() -> None:
    """Bidirectional overrides (U+202E), zero-width and other invisible format characters, line
    separators and control characters never reach the terminal raw; printable text is untouched."""
    import unicodedata

    from envfactory.cli._common import safe_text

    hidden = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        shown = safe_text(f"a{char}b")
        if char != "\t" and unicodedata.category(char) in hidden:
            assert char not in shown and shown.startswith("a\\") and shown.endswith("b"), hex(code)
        else:
            assert shown == f"a{char}b", hex(code)


def test_text_reports_escape_bidirectional_overrides(tmp_path: Path) -> None:
    log = tmp_path / "bidi.jsonl"
    log.write_text(
        '{"id": "t\\u202eevil", "steps": [{"tool": "open\\u202e", "input": {"account": "A\\u200bB"}}]}\n'
        '{"id": "t2", "steps": [{"tool": "open", "input": {"account": "AB\\u202e01", "owner": "x"}}]}\n',
        encoding="utf-8",
    )
    result = run("verify", "examples/bank/bank.yaml", str(log))
    assert result.returncode == 1
    assert "\u202e" not in result.stdout + result.stderr and "\u200b" not in result.stdout + result.stderr
    assert "t\\u202eevil" in result.stdout and "open\\u202e" in result.stdout


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", ["fuzz", "replay"])
def test_a_target_nothing_listens_on_is_one_line_and_exit_2(command: str) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    if command == "fuzz":
        result = run("fuzz", "examples/bank/bank.yaml", "--target", url, "--max-examples", "5")
    else:
        result = run("replay", "examples/bank/bank.yaml", "examples/bank/trajectories.jsonl", "--target", url)
    assert result.returncode == 2, result.stdout
    assert result.stderr.strip().splitlines() == [
        f"envfactory: error: the target {url} cannot be reached: Connection refused"
    ]
    assert "crash" not in result.stdout and "differ" not in result.stdout


def test_replaying_another_contracts_trajectories_says_so() -> None:
    result = run("replay", "examples/bank/bank.yaml", "examples/tickets/trajectories.jsonl")
    assert result.returncode == 2
    assert "calls tools examples/bank/bank.yaml does not have (assign, create_ticket" in result.stderr
    assert "with differences" not in result.stdout


def test_fuzz_writes_nothing_into_the_folder_it_runs_in(tmp_path: Path) -> None:
    """Hypothesis caches the constants it mines from the target's module; not in the user's folder."""
    target = f"python:{ROOT / 'tests' / 'fuzz' / 'impls' / 'bank_impl.py'}:Bank"
    contract = str(ROOT / "examples" / "bank" / "bank.yaml")
    result = run("fuzz", contract, "--target", target, "--max-examples", "10", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert list(tmp_path.iterdir()) == []  # no .hypothesis/ (a database only where --database says)


@pytest.mark.parametrize(
    "args",
    [
        ["generate", "examples/tickets/tickets.yaml", "-n", "3", "-o", "-", "--engine", "ray"],
        ["verify", "examples/bank/bank.yaml", "examples/bank/trajectories.jsonl", "--engine", "ray"],
        ["fuzz", "examples/bank/bank.yaml", "--target", "sim", "--max-examples", "3", "--engine", "ray"],
    ],
    ids=["generate", "verify", "fuzz"],
)
def test_ray_missing_is_exit_2_with_the_install_hint(args: list[str]) -> None:
    """Each command that takes --engine ray, with Ray made unimportable: a usage error, never 70."""
    code = f"import sys; sys.modules['ray'] = None; from envfactory.cli import main; main({args!r})"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "envfactory: error: --engine ray needs ray, which is not installed: pip install 'envfactory[ray]'"
    )


@pytest.mark.parametrize("command", ["verify", "import"])
def test_an_explicit_format_that_finds_no_tool_call_says_so(command: str, tmp_path: Path) -> None:
    """An Anthropic log read as OpenAI chat has no tool call in that format: an error naming the
    likely format, not three valid runs of zero steps."""
    log = "tests/importers/fixtures/anthropic_messages.json"
    if command == "verify":
        result = run("verify", "examples/bank/bank.yaml", log, "--input-format", "openai-chat")
    else:
        result = run("import", "openai-chat", log, "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 2, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert "no tool call found" in said and "--input-format anthropic" in said
    assert "VALID" not in result.stdout
