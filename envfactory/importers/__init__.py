"""Agent logs to trajectories: one module per log format, ``sniff`` to tell them apart, and
``import_file`` to read a file in any of them.

Every importer has the same shape, ``import_<format>(data, *, source, line=0)``: ``data`` is one
parsed JSON record, and the result streams ``Trajectory`` values, with a ``TrajectoryError`` in
place of each conversation that cannot be imported (never an exception for bad data).
Nothing read is ever executed. Imports only ``envfactory.trajectory`` and the error types.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from envfactory.contracts.errors import TrajectoryError, UsageError
from envfactory.importers._common import read_records
from envfactory.importers.anthropic import import_anthropic
from envfactory.importers.bfcl import import_bfcl, load_bfcl_function_docs, parse_call
from envfactory.importers.openai_chat import import_openai_chat
from envfactory.importers.openai_responses import import_openai_responses
from envfactory.importers.sniff import sniff
from envfactory.trajectory import Trajectory, read_trajectories

Importer = Callable[..., Iterator[Trajectory | TrajectoryError]]

IMPORTERS: dict[str, Importer] = {
    "openai-chat": import_openai_chat,
    "openai-responses": import_openai_responses,
    "anthropic": import_anthropic,
    "bfcl": import_bfcl,
}
FORMATS = ("auto", "native", *IMPORTERS)
"""The names ``import_file`` (and ``envfactory import``) accept."""


def import_file(
    fmt: str, path: Path | str, *, function_docs: Mapping[str, Mapping[str, Any]] | None = None
) -> Iterator[Trajectory | TrajectoryError]:
    """The trajectories of a log file in format ``fmt`` (one of ``FORMATS``), streamed: a JSON
    Lines file is read record by record, any other file as one JSON document. ``auto`` decides
    from the first record. ``function_docs`` are BFCL's, for positional arguments."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown log format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    if function_docs is not None and fmt not in ("bfcl", "auto"):
        raise UsageError(f"function docs are for the bfcl format, not {fmt!r}")
    if fmt == "native":
        return read_trajectories(path)
    return _import(fmt, path, function_docs)


def _import(
    fmt: str, path: Path | str, function_docs: Mapping[str, Mapping[str, Any]] | None
) -> Iterator[Trajectory | TrajectoryError]:
    name = str(path)
    importer: Importer | None = None if fmt == "auto" else IMPORTERS[fmt]
    chosen = fmt
    for record in read_records(path):
        if isinstance(record, TrajectoryError):
            yield record
            continue
        location, data = record
        if importer is None:
            try:
                chosen = sniff(data)
            except TrajectoryError as err:
                yield TrajectoryError(err.message, location)
                return
            if chosen == "native":  # the native reader, from the start, minus the errors already told
                for item in read_trajectories(path):
                    told = (
                        isinstance(item, TrajectoryError) and (item.location or location).line < location.line
                    )
                    if not told:
                        yield item
                return
            importer = IMPORTERS[chosen]
        kwargs: dict[str, Any] = {"source": name, "line": location.line}
        if chosen == "bfcl":
            kwargs["function_docs"] = function_docs
        yield from importer(data, **kwargs)


__all__ = [
    "FORMATS",
    "IMPORTERS",
    "import_anthropic",
    "import_bfcl",
    "import_file",
    "import_openai_chat",
    "import_openai_responses",
    "load_bfcl_function_docs",
    "parse_call",
    "sniff",
]
