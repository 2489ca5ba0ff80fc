"""The trajectory file format, as published: the models, the readers, the writers, the schema.

A trajectory file is JSON Lines, one trajectory per line; a ``.json`` file holding one trajectory
or a list of them also reads (see DESIGN.md "Trajectories" and ``schemas/trajectory.schema.json``,
the published form of the same rules). ``{"$var": "name"}`` anywhere in ``input``, ``output`` or
``initial`` is a *hole*: an unknown value, the same name standing for the same value.

This is the public namespace; the work is done in private modules named for what they hold:
``_model`` (``Trajectory``, ``Step``, ``Hole``), ``_values`` (hostile-value checks and walks),
``_shape`` (a parsed object checked and built into the model), ``_decode`` (one JSON text, the hot
path, with ``_wire``'s msgspec types), ``_jsonl`` (the streaming readers), ``_jsonlist`` (a
``.json`` list streamed item by item) and ``_writer``. The models sit in their own module so that
the readers and writers can build them without importing this one: no import cycle.

This package is a layer of its own, between ``contracts`` and ``statemachine``: it imports nothing
of envfactory beyond ``envfactory.contracts``, so that every layer above (statemachine, solver,
fuzz, the CLI) can read and write trajectories (tests/test_layers.py holds it to that).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envfactory.trajectory._decode import MAX_LINE_BYTES, parse_json_value, parse_line, parse_lines
from envfactory.trajectory._jsonl import MAX_DOCUMENT_BYTES, read_trajectories, read_trajectories_text
from envfactory.trajectory._jsonlist import holds_native_list, list_items, parse_list_item
from envfactory.trajectory._model import (
    BROKEN_ARGUMENTS,
    Hole,
    Step,
    Trajectory,
    completion_message,
    fill_holes,
    is_native_record,
    iter_holes,
    short_json,
)
from envfactory.trajectory._shape import parse_trajectory
from envfactory.trajectory._stream import STREAM_BYTES, StreamedSteps, holds_large_native_object
from envfactory.trajectory._values import MAX_DEPTH, check_value
from envfactory.trajectory._wire import UNSET
from envfactory.trajectory._writer import dumps_jsonl, dumps_trajectory, to_json, write_trajectories

SCHEMA_ID = "https://envfactory.dev/schemas/trajectory.schema.json"
SCHEMA_PATH = Path(__file__).parent / "schemas" / "trajectory.schema.json"


def trajectory_schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of one trajectory."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def trajectory_features() -> Any:
    """``datasets.Features`` for a trajectory file: free-form values as ``Json`` so that rows with
    different shapes load together. Imports ``datasets`` (an optional dependency) on call."""
    from datasets import Features, Json, List, Value

    return Features(
        {
            "id": Value("string"),
            "contract": Value("string"),
            "seed": Value("int64"),
            "initial": Json(),
            "steps": List(
                {
                    "tool": Value("string"),
                    "input": Json(),
                    "output": Json(),
                    "status": Value("int64"),
                    "meta": Json(),
                }
            ),
            "meta": Json(),
        }
    )


__all__ = [
    "BROKEN_ARGUMENTS",
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "SCHEMA_ID",
    "STREAM_BYTES",
    "UNSET",
    "Hole",
    "Step",
    "StreamedSteps",
    "Trajectory",
    "check_value",
    "completion_message",
    "dumps_jsonl",
    "dumps_trajectory",
    "fill_holes",
    "holds_large_native_object",
    "holds_native_list",
    "is_native_record",
    "iter_holes",
    "list_items",
    "parse_json_value",
    "parse_line",
    "parse_lines",
    "parse_list_item",
    "parse_trajectory",
    "read_trajectories",
    "read_trajectories_text",
    "short_json",
    "to_json",
    "trajectory_features",
    "trajectory_schema",
    "write_trajectories",
]
