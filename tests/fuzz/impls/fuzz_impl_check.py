"""Tiny input checks for the hand-written test implementations (no schema library on purpose)."""

from __future__ import annotations

import re
from typing import Any


class ApiError(Exception):
    """An error response: the fuzz target protocol reads its integer ``status``."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(message or f"status {status}")
        self.status = status


def need(condition: bool, status: int, message: str = "") -> None:
    if not condition:
        raise ApiError(status, message)


def is_int(value: Any) -> bool:
    return type(value) is int


def is_str(value: Any) -> bool:
    return type(value) is str


ABSENT: Any = object()
"""The default of an optional input: told apart from any value a call may send."""


def option(value: Any, low: int, high: int, default: int) -> int:
    """An optional integer input: absent reads as ``default``; anything else must be in range."""
    need(value is ABSENT or (is_int(value) and low <= value <= high), 422)
    return default if value is ABSENT else int(value)


def answers(obj: Any, trace: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """What ``obj`` answers to each call of ``trace``: the return value, or the error status."""
    out: list[Any] = []
    for name, kwargs in trace:
        try:
            out.append(getattr(obj, name)(**kwargs))
        except ApiError as err:
            out.append(err.status)
    return out


def shows_last(correct: Any, planted: Any, trace: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether the planted implementation answers ``trace`` as the correct one does up to its
    last call, and differently there: the bug shows at exactly that depth."""
    right, wrong = answers(correct, trace), answers(planted, trace)
    return right[:-1] == wrong[:-1] and right[-1] != wrong[-1]


def matches(pattern: str, value: Any) -> bool:
    return is_str(value) and re.search(pattern, value) is not None
