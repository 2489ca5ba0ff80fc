"""The trajectory writers: JSON Lines out, holes back to ``{"$var": name}``.

Imports nothing from envfactory beyond ``envfactory.contracts.errors`` and the trajectory format
modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from envfactory.contracts.errors import TrajectoryError
from envfactory.trajectory._model import Hole, Trajectory
from envfactory.trajectory._values import _VAR


def _default(value: Any) -> Any:
    if isinstance(value, Hole):
        return {_VAR: value.name}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _unholed(value: Any) -> Any:
    if isinstance(value, Hole):
        return {_VAR: value.name}
    if isinstance(value, Mapping):
        return {key: _unholed(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_unholed(item) for item in value]
    return value


def _shallow(traj: Trajectory) -> dict[str, Any]:
    """The written form with holes still ``Hole`` (orjson's ``default`` writes them)."""
    out: dict[str, Any] = {"id": traj.id}
    if traj.contract is not None:
        out["contract"] = traj.contract
    if traj.seed is not None:
        out["seed"] = traj.seed
    if traj.initial is not None:
        out["initial"] = traj.initial
    steps = []
    for step in traj.steps:
        entry: dict[str, Any] = {"tool": step.tool, "input": step.input}
        if step.has_output:
            entry["output"] = step.output
        if step.status is not None:
            entry["status"] = step.status
        if step.meta is not None:
            entry["meta"] = step.meta
        steps.append(entry)
    out["steps"] = steps
    if traj.meta is not None:
        out["meta"] = traj.meta
    return out


def to_json(traj: Trajectory) -> dict[str, Any]:
    """The trajectory as plain JSON data: holes back to ``{"$var": name}``, unknown output and
    status omitted, keys in the written order (id, contract, seed, initial, steps, meta)."""
    result: dict[str, Any] = _unholed(_shallow(traj))
    return result


def dumps_trajectory(traj: Trajectory) -> bytes:
    """One trajectory as one line of JSON (no newline)."""
    try:
        return orjson.dumps(_shallow(traj), default=_default)
    except TypeError as err:  # orjson.JSONEncodeError is a TypeError
        raise TrajectoryError(
            f"trajectory {traj.id!r} cannot be written as JSON: {err}", traj.source
        ) from None


def dumps_jsonl(trajs: Iterable[Trajectory]) -> str:
    """Trajectories as JSON Lines text, one per line, each line ending in a newline."""
    return "".join(dumps_trajectory(t).decode("utf-8") + "\n" for t in trajs)


def write_trajectories(path: Path | str | IO[bytes], trajs: Iterable[Trajectory]) -> int:
    """Write trajectories as JSON Lines (streamed); return how many were written.

    The file loads with HuggingFace ``datasets`` as JSON Lines. ``input``, ``output``,
    ``initial`` and ``meta`` are free-form, so their Arrow types may differ from row to row;
    ``datasets`` (>= 4) stores such mixed fields as JSON when it sees the mix in the first chunk
    it reads (10 MB). For files whose rows differ later on, pass
    ``features=trajectory_features()`` to ``datasets.load_dataset`` (robust for any file).
    """
    if isinstance(path, str | Path):
        with open(path, "wb") as handle:
            return _write(handle, trajs)
    return _write(path, trajs)


def _write(handle: IO[bytes], trajs: Iterable[Trajectory]) -> int:
    count = 0
    for traj in trajs:
        handle.write(dumps_trajectory(traj) + b"\n")
        count += 1
    return count
