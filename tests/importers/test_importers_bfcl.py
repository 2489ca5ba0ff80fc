"""BFCL multi-turn ground truth: call strings parsed with ``ast`` and never run, positional
arguments named from the function docs, the involved classes' docs found in the installed package."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envfactory.contracts.errors import InputError, TrajectoryError
from envfactory.importers import bfcl, import_bfcl, load_bfcl_function_docs, load_questions, parse_call, read
from envfactory.importers._common import Problem
from envfactory.importers.bfcl import CLASS_DOC_FILES, bfcl_data_dir, class_doc_files, class_function_docs
from envfactory.trajectory import Trajectory, to_json

FIXTURES = Path(__file__).parent / "fixtures"
DOCS = load_bfcl_function_docs([FIXTURES / "bfcl_functions.json"])


def test_keyword_calls_need_no_docs() -> None:
    assert parse_call("mv(source='a.txt', destination='tmp')", {}) == (
        "mv",
        {"source": "a.txt", "destination": "tmp"},
    )
    assert parse_call("ls(a=True)", {}) == ("ls", {"a": True})
    assert parse_call("f()", {}) == ("f", {})


def test_positional_arguments_take_the_doc_order() -> None:
    assert parse_call("sort('final_report.pdf')", DOCS) == ("sort", {"file_name": "final_report.pdf"})
    assert parse_call("tail('log.txt', 20)", DOCS) == ("tail", {"file_name": "log.txt", "lines": 20})
    assert parse_call("tail('log.txt', lines=5)", DOCS) == ("tail", {"file_name": "log.txt", "lines": 5})
    assert parse_call("Fs.sort('x')", DOCS) == ("Fs.sort", {"file_name": "x"})  # dotted: doc by last part


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sort('a')", "need its function doc"),
        ("tail('a', 1, 2)", "takes 2 parameters"),
        ("tail('a', file_name='b')", "both by position and by keyword"),
        ("cd(*['a'])", "'*' arguments"),
        ("cd(**{'folder': 'a'})", "'**' arguments"),
    ],
)
def test_positional_argument_errors(text: str, message: str) -> None:
    docs = DOCS if "need" not in message else {}
    with pytest.raises(Problem) as info:
        parse_call(text, docs)
    assert message in str(info.value)


def test_literals_of_every_kind() -> None:
    text = "f(a=-3, b=+2.5, c=(1, 2), d={'k': [None, False]}, e='x', g=-1e3, h=[], i=0x10)"
    assert parse_call(text, {})[1] == {
        "a": -3,
        "b": 2.5,
        "c": [1, 2],
        "d": {"k": [None, False]},
        "e": "x",
        "g": -1000.0,
        "h": [],
        "i": 16,
    }


@pytest.mark.parametrize(
    "text",
    [
        "cd(folder=__import__('os').getcwd())",
        "cd(folder=open('/etc/passwd').read())",
        "cd(folder=(lambda: 'x')())",
        "cd(folder=f'{1+1}')",
        "cd(folder='a' + 'b')",
        "cd(folder=[x for x in 'ab'])",
        "cd(folder={'a', 'b'})",
        "cd(folder=b'bytes')",
        "cd(folder=1j)",
        "cd(folder=...)",
        "cd(folder=x)",
        "cd(folder=10**100)",
        "cd(folder=" + "9" * 30 + ")",
        "cd(folder={1: 'a'})",
        "cd(folder=-'a')",
        "(lambda: 1)()",
        "import os",
        "cd(folder='a'); rm('b')",
        "cd",
        "cd(folder=" + "[" * 500 + "]" * 500 + ")",
        "cd(folder=" + "[" * 70 + "]" * 70 + ")",
    ],
)
def test_anything_but_a_literal_call_is_refused(text: str) -> None:
    with pytest.raises(Problem):
        parse_call(text, DOCS)


def test_call_strings_are_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    text = f"cd(folder=__import__('pathlib').Path({str(marker)!r}).touch())"
    with pytest.raises(Problem, match="only literal arguments"):
        parse_call(text, {})
    assert not marker.exists()


def test_fixture_entries_import_one_trajectory_each_with_turns() -> None:
    got = list(
        read("bfcl", FIXTURES / "bfcl_possible_answer.json", functions=[FIXTURES / "bfcl_functions.json"])
    )
    assert [t.id if isinstance(t, Trajectory) else "error" for t in got] == [
        "multi_turn_base_0",
        "multi_turn_miss_func_1",
        "error",
        "multi_turn_base_3",
    ]
    base = got[0]
    assert isinstance(base, Trajectory)
    assert [s.tool for s in base.steps] == ["cd", "mkdir", "mv", "cd", "grep", "sort"]
    assert [s.meta["turn"] for s in base.steps if s.meta] == [0, 0, 0, 1, 1, 2]
    assert base.steps[-1].input == {"file_name": "final_report.pdf"}
    assert not any(s.has_output for s in base.steps)
    skipped = got[1]
    assert isinstance(skipped, Trajectory)  # an empty turn keeps the turn numbers of the others
    assert [s.meta["turn"] for s in skipped.steps if s.meta] == [0, 2]
    bad = got[2]
    assert isinstance(bad, TrajectoryError)
    assert "multi_turn_base_bad" in bad.message and "ground_truth[0][0].folder" in bad.message
    assert bad.location is not None and bad.location.line == 3


def test_without_docs_only_the_positional_entry_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bfcl, "installed_questions", dict)  # as if bfcl-eval were not installed
    got = list(read("bfcl", FIXTURES / "bfcl_possible_answer.json"))
    errors = [g for g in got if isinstance(g, TrajectoryError)]
    assert len(got) == 4 and len(errors) == 2
    assert "sort() has positional arguments" in errors[0].message and "--functions" in errors[0].message


def test_question_entries_are_refused_with_a_hint() -> None:
    [err] = import_bfcl({"id": "q", "question": [[{"role": "user", "content": "hi"}]]}, source="q.json")
    assert isinstance(err, TrajectoryError) and "possible_answer" in err.message


def test_single_turn_answers_are_refused_with_a_hint() -> None:
    entry = {"id": "simple_python_0", "ground_truth": [{"calculate_triangle_area": {"base": [10]}}]}
    [err] = import_bfcl(entry, source="s.json")
    assert isinstance(err, TrajectoryError) and "single-turn" in err.message


def test_function_docs_conflicts_and_bad_docs(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    doc = json.loads((FIXTURES / "bfcl_functions.json").read_text().splitlines()[0])
    doc["description"] = "changed"
    other.write_text(json.dumps(doc) + "\n")
    with pytest.raises(InputError, match="already documented differently"):
        load_bfcl_function_docs([FIXTURES / "bfcl_functions.json", other])
    nameless = tmp_path / "nameless.json"
    nameless.write_text('[{"description": "no name"}]')
    with pytest.raises(InputError, match="must be an object with a 'name'"):
        load_bfcl_function_docs([nameless])
    with pytest.raises(InputError, match="unknown BFCL class"):
        class_doc_files(["NoSuchAPI"], data_dir=tmp_path)


def bfcl_layout(tmp_path: Path, entries: list[dict[str, Any]], classes: dict[str, list[str]]) -> Path:
    """A folder laid out as bfcl_eval's data/: the test entries beside possible_answer/."""
    answers = tmp_path / "data" / "possible_answer"
    answers.mkdir(parents=True)
    name = "BFCL_v4_multi_turn_x.json"
    (answers / name).write_text("".join(json.dumps(e) + "\n" for e in entries))
    (tmp_path / "data" / name).write_text(
        "".join(
            json.dumps({"id": k, "question": [], "involved_classes": v}) + "\n" for k, v in classes.items()
        )
    )
    return answers / name


@pytest.mark.skipif(bfcl_data_dir() is None, reason="bfcl-eval is not installed")
def test_involved_classes_locate_the_installed_docs(tmp_path: Path) -> None:
    path = bfcl_layout(
        tmp_path,
        [
            {"id": "e1", "ground_truth": [["sort('a.txt')"], ["post_tweet('hi', ['#t'])"]]},
            {"id": "e2", "ground_truth": [["sort('a.txt')"]]},
        ],
        {"e1": ["GorillaFileSystem", "TwitterAPI"]},
    )
    assert load_questions(path.parent.parent / path.name) == {"e1": ("GorillaFileSystem", "TwitterAPI")}
    e1, e2 = read("bfcl", path)
    assert isinstance(e1, Trajectory)
    assert [s.input for s in e1.steps] == [{"file_name": "a.txt"}, {"content": "hi", "tags": ["#t"]}]
    assert e1.meta == {"source": "bfcl", "involved_classes": ["GorillaFileSystem", "TwitterAPI"]}
    assert isinstance(e2, TrajectoryError)  # no classes known for e2, and no --functions
    docs = class_function_docs(("MathAPI",))
    assert "absolute_value" in docs and "sort" not in docs
    assert set(CLASS_DOC_FILES) >= {"GorillaFileSystem", "TwitterAPI", "TravelAPI"}


def test_explicit_docs_win_over_class_docs(tmp_path: Path) -> None:
    entry = {"id": "e1", "ground_truth": [["tail('a', 3)"]]}
    [traj] = import_bfcl(entry, source="x.json", function_docs=DOCS)
    assert isinstance(traj, Trajectory) and to_json(traj)["steps"][0]["input"] == {
        "file_name": "a",
        "lines": 3,
    }


@pytest.mark.skipif(bfcl_data_dir() is None, reason="bfcl-eval is not installed")
def test_a_copied_answer_file_finds_its_classes_by_id(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"  # no test-entry file beside it
    path.write_text(
        json.dumps({"id": "multi_turn_base_0", "ground_truth": [["sort('final_report.pdf')"]]}) + "\n"
    )
    [traj] = read("bfcl", path)
    assert isinstance(traj, Trajectory)
    assert traj.meta is not None and set(traj.meta["involved_classes"]) == {"GorillaFileSystem", "TwitterAPI"}
    assert traj.steps[0].input == {"file_name": "final_report.pdf"}


call_texts = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda name, body: f"{name}({body})",
        st.sampled_from(["cd", "tail", "sort", "a.b", "1", "f()"]),
        st.text(alphabet="'\"(),=[]{}:*-+.0123456789abcxyz_ \\", max_size=40),
    ),
)


@settings(max_examples=300, deadline=None, database=None)
@given(call_texts)
def test_parse_call_answers_or_refuses_never_crashes(text: str) -> None:
    try:
        name, arguments = parse_call(text, DOCS)
    except Problem as problem:
        assert problem.message
    else:
        assert isinstance(name, str) and isinstance(arguments, dict)
