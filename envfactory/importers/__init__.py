"""Agent logs to trajectories (OpenAI chat and Responses, Anthropic, Gemini, Bedrock, Cohere v1,
Mistral Conversations, LangChain, MCP, BFCL): one module per log format, ``sniff`` to tell them apart, and
``read(format, path, **opts)`` (used by ``envfactory import`` and ``verify --input-format``) to
read a file in any of them.

Every importer has the same shape, ``import_<format>(data, *, source, line=0)``: ``data`` is one
parsed JSON record, and the result streams ``Trajectory`` values, with a ``TrajectoryError`` in
place of each conversation that cannot be imported (never an exception for bad data).
Nothing read is ever executed. Imports only the trajectory format (``envfactory.trajectory`` and its private modules) and the error types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from envfactory.contracts.errors import InputError, Location, TrajectoryError, UsageError
from envfactory.importers._common import BROKEN_ARGUMENTS, broken_arguments, read_records
from envfactory.importers.anthropic import import_anthropic
from envfactory.importers.batches import open_envelope
from envfactory.importers.bedrock import import_bedrock
from envfactory.importers.bfcl import (
    class_function_docs,
    import_bfcl,
    load_bfcl_function_docs,
    load_questions,
    parse_call,
    questions_beside,
)
from envfactory.importers.cohere import import_cohere
from envfactory.importers.gemini import import_gemini
from envfactory.importers.langchain import import_langchain
from envfactory.importers.mcp import import_mcp
from envfactory.importers.mistral import import_mistral
from envfactory.importers.openai_chat import import_openai_chat
from envfactory.importers.openai_responses import import_openai_responses
from envfactory.importers.sniff import sniff
from envfactory.importers.streams import assemble
from envfactory.trajectory import (
    Trajectory,
    holds_large_native_object,
    holds_native_list,
    parse_trajectory,
    read_trajectories,
)

Importer = Callable[..., Iterator[Trajectory | TrajectoryError]]

IMPORTERS: dict[str, Importer] = {
    "openai-chat": import_openai_chat,
    "openai-responses": import_openai_responses,
    "anthropic": import_anthropic,
    "gemini": import_gemini,
    "bedrock": import_bedrock,
    "cohere": import_cohere,
    "mistral": import_mistral,
    "langchain": import_langchain,
    "mcp": import_mcp,
    "bfcl": import_bfcl,
}
FORMATS = ("auto", "native", *IMPORTERS)
"""The names ``import_file`` (and ``envfactory import``) accept."""


def import_file(
    fmt: str,
    path: Path | str,
    *,
    function_docs: Mapping[str, Mapping[str, Any]] | None = None,
    questions: Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[Trajectory | TrajectoryError]:
    """The trajectories of a log file in format ``fmt`` (one of ``FORMATS``), streamed: a JSON
    Lines file is read record by record, any other file as one JSON document. ``auto`` tells
    each record's format from its structure. ``function_docs`` are BFCL's, for positional
    arguments; ``questions`` map BFCL entry ids to their involved classes (default: the test-entry
    file beside a ``possible_answer/`` file, else the installed ``bfcl_eval``'s entries)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown log format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if (function_docs is not None or questions is not None) and fmt not in ("bfcl", "auto"):
        raise UsageError(f"function docs and questions are for the bfcl format, not {fmt!r}")
    if fmt == "native":
        return read_trajectories(path)
    return _import(fmt, path, function_docs, questions)


def read(
    fmt: str,
    path: Path | str,
    *,
    functions: Iterable[Path | str] = (),
    function_docs: Mapping[str, Mapping[str, Any]] | None = None,
    questions: Path | str | Mapping[str, tuple[str, ...]] | None = None,
) -> Iterator[Trajectory | TrajectoryError]:
    """Trajectories from a file in any format, for ``verify --input-format FORMAT``.

    ``fmt`` is ``native`` (the trajectory format), ``auto`` (sniffed from the first record) or a
    log format of ``FORMATS``. ``functions`` are BFCL function-doc files and ``questions`` a BFCL
    test-entry file (or its id -> classes map); both matter for ``bfcl`` only. Streams like
    ``read_trajectories``: a record that cannot be imported is a ``TrajectoryError`` in its place.
    Raises ``UsageError`` for an unknown format and ``InputError`` for unreadable doc files."""
    docs: dict[str, Mapping[str, Any]] = dict(function_docs or {})
    files = list(functions)
    if files:
        docs.update(load_bfcl_function_docs(files))
    table = load_questions(questions) if isinstance(questions, str | Path) else questions
    return import_file(fmt, path, function_docs=docs or None, questions=table)


def _import(
    fmt: str,
    path: Path | str,
    function_docs: Mapping[str, Mapping[str, Any]] | None,
    questions: Mapping[str, tuple[str, ...]] | None,
) -> Iterator[Trajectory | TrajectoryError]:
    name = str(path)
    if fmt == "auto" and (holds_native_list(path) or holds_large_native_object(path)):
        yield from read_trajectories(path)  # streamed, not decoded whole to be sniffed
        return
    chosen: str | None = None if fmt == "auto" else fmt  # the format of the records seen so far
    current = fmt
    for record in assemble(read_records(path)):
        if isinstance(record, TrajectoryError):
            yield record
            continue
        location, data = record
        data = open_envelope(data, location)
        if isinstance(data, TrajectoryError):
            yield data
            continue
        if fmt == "auto":  # each record on its own: a log may mix formats
            try:
                found = sniff(data, plain=chosen or "openai-chat")
            except TrajectoryError as err:
                yield TrajectoryError(err.message, location)
                continue
            if found == "native" and chosen is None:  # the native reader, from the start, minus told errors
                for item in read_trajectories(path):
                    told = (
                        isinstance(item, TrajectoryError) and (item.location or location).line < location.line
                    )
                    if not told:
                        yield item
                return
            chosen = current = found
        if current == "native":
            yield _native(data, location)
            continue
        kwargs: dict[str, Any] = {"source": name, "line": location.line}
        if current == "bfcl":
            if questions is None:
                beside = questions_beside(path)
                questions = _questions_or_none(beside)
            kwargs["function_docs"] = function_docs
            kwargs["questions"] = questions
        imported = list(IMPORTERS[current](data, **kwargs))
        if fmt != "auto" and imported and all(isinstance(t, Trajectory) and not t.steps for t in imported):
            # no tool call under the format the user named: fine for a plain conversation of that
            # format, but a record that looks like another format (an Anthropic log read as OpenAI
            # chat) is an error, not an empty run that passes as valid
            try:
                guess: str | None = sniff(data, plain=fmt)
            except TrajectoryError:
                guess = None
            if guess is not None and guess != fmt:
                yield TrajectoryError(
                    f"{fmt}: no tool call found in this record; it looks like {guess} "
                    f"(--input-format {guess})",
                    location,
                )
                continue
        yield from imported


def _native(data: Any, location: Location) -> Trajectory | TrajectoryError:
    """A native trajectory met among log records (``auto`` on a mixed file)."""
    default = f"{Path(location.file).stem}:{location.line}" if location.line else None
    try:
        return parse_trajectory(data, location, default_id=default)
    except TrajectoryError as err:
        return err


def _questions_or_none(path: Path | None) -> dict[str, tuple[str, ...]]:
    if path is None:
        return {}
    try:
        return load_questions(path)
    except InputError:
        return {}


__all__ = [
    "BROKEN_ARGUMENTS",
    "FORMATS",
    "IMPORTERS",
    "broken_arguments",
    "class_function_docs",
    "import_anthropic",
    "import_bedrock",
    "import_bfcl",
    "import_cohere",
    "import_file",
    "import_gemini",
    "import_langchain",
    "import_mcp",
    "import_mistral",
    "import_openai_chat",
    "import_openai_responses",
    "load_bfcl_function_docs",
    "load_questions",
    "parse_call",
    "read",
    "sniff",
]
