"""`envfactory import FORMAT FILE -o OUT.jsonl`: exit codes, streaming output, one line per error."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from envfactory.cli import main
from envfactory.trajectory import Trajectory, read_trajectories

FIXTURES = Path(__file__).parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_:
        main(["import", *args])
    out, err = capsys.readouterr()
    code = exit_.value.code
    return code if isinstance(code, int) else 0, out, err


def test_import_writes_a_trajectory_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.jsonl"
    code, stdout, stderr = run(
        capsys, "openai-chat", str(FIXTURES / "openai_chat_conversation.json"), "-o", str(out)
    )
    assert code == 0, stderr
    assert "imported 1 trajectory" in stdout and stderr == ""
    [traj] = list(read_trajectories(out))
    assert isinstance(traj, Trajectory) and [s.tool for s in traj.steps] == [
        "addPet",
        "listPets",
        "deletePet",
    ]


def test_auto_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = run(capsys, "auto", str(FIXTURES / "anthropic_messages.json"), "-o", "-")
    assert code == 0
    [line] = stdout.splitlines()
    assert orjson.loads(line)["meta"] == {"source": "anthropic"}
    assert "imported 1 trajectory" in stderr


def test_bad_records_exit_2_and_the_rest_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    code, _stdout, stderr = run(
        capsys, "openai-chat", str(FIXTURES / "openai_chat_finetune.jsonl"), "-o", str(out)
    )
    assert code == 2
    lines = stderr.splitlines()
    assert any(":4:53: invalid JSON" in x for x in lines)
    finding = [x for x in lines if x.startswith("envfactory: finding:")]
    assert (
        len(finding) == 1 and "openai_chat_finetune.jsonl:2" in finding[0] and "step 0 (addPet)" in finding[0]
    )
    assert len(list(read_trajectories(out))) == 4


def test_broken_arguments_alone_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.json"
    log.write_text(
        '[{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",'
        ' "function": {"name": "f\\u001b[31m", "arguments": "{nope"}}]}]'
    )
    out = tmp_path / "out.jsonl"
    code, _stdout, stderr = run(capsys, "openai-chat", str(log), "-o", str(out))
    assert code == 1
    assert "\x1b" not in stderr and "\\x1b" in stderr  # a hostile tool name cannot drive the terminal
    [traj] = list(read_trajectories(out))
    assert isinstance(traj, Trajectory) and traj.steps[0].input == "{nope"


def test_bfcl_with_functions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "gt.jsonl"
    answers = str(FIXTURES / "bfcl_possible_answer.json")
    code, _o, stderr = run(
        capsys, "bfcl", answers, "-o", str(out), "--functions", str(FIXTURES / "bfcl_functions.json")
    )
    assert code == 2 and stderr.count("envfactory: error:") == 1  # only the entry with a non-literal
    ids = [t.id for t in read_trajectories(out) if isinstance(t, Trajectory)]
    assert ids == ["multi_turn_base_0", "multi_turn_miss_func_1", "multi_turn_base_3"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["anthropic", "IN", "-o", "OUT", "--functions", "FUNCS"], "are for the bfcl format"),
        (["anthropic", "IN", "-o", "IN"], "the output file is the input file"),
        (["xml", "IN", "-o", "OUT"], "Invalid value for 'FORMAT'"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    names = {
        "IN": str(FIXTURES / "anthropic_response.json"),
        "OUT": str(tmp_path / "o.jsonl"),
        "FUNCS": str(FIXTURES / "bfcl_functions.json"),
    }
    code, _out, stderr = run(capsys, *[names.get(a, a) for a in args])
    assert code == 2 and message in stderr
    assert len(stderr.strip().splitlines()) == 1 and "Traceback" not in stderr
    assert not (tmp_path / "o.jsonl").exists()
