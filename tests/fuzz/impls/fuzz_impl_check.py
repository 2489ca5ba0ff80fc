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


def matches(pattern: str, value: Any) -> bool:
    return is_str(value) and re.search(pattern, value) is not None
