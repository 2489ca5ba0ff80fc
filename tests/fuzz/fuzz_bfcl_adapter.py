"""Adapter: BFCL's executable multi-turn API classes as ``python:`` fuzz targets.

``bfcl_eval`` ships the classes behind its multi-turn benchmark (``GorillaFileSystem``,
``MathAPI``, ``TwitterAPI``...) and their function docs (``data/multi_turn_func_doc/*.json``),
which load as tool-list contracts. Most classes need ``_load_scenario`` before use; each factory
here builds a fresh instance with the package's default scenario (an empty config), which is
what the protocol asks of ``FACTORY()``. Usage:

    envfactory fuzz $BFCL/data/multi_turn_func_doc/math_api.json \\
        --target python:tests/fuzz/fuzz_bfcl_adapter.py:math_api
"""

from __future__ import annotations

import importlib
import inspect
import os
import signal
import threading
from typing import Any

PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
CLASSES = {
    "gorilla_file_system": ("gorilla_file_system", "GorillaFileSystem"),
    "math_api": ("math_api", "MathAPI"),
    "message_api": ("message_api", "MessageAPI"),
    "posting_api": ("posting_api", "TwitterAPI"),
    "ticket_api": ("ticket_api", "TicketAPI"),
    "trading_bot": ("trading_bot", "TradingBot"),
    "travel_booking": ("travel_booking", "TravelAPI"),
    "vehicle_control": ("vehicle_control", "VehicleControlAPI"),
}


def func_doc(name: str) -> str:
    """The path of the function doc (tool list) that goes with ``name``."""
    import bfcl_eval

    return os.path.join(os.path.dirname(bfcl_eval.__file__), "data", "multi_turn_func_doc", f"{name}.json")


CALL_SECONDS = 0.5
"""A call that runs longer is stopped with ``CallTimedOut`` (a crash: the API hangs)."""


class CallTimedOut(Exception):
    """A BFCL method ran past ``CALL_SECONDS`` (``math_api``'s big-number functions can)."""


class Guarded:
    """The API object with every public method under a time limit (SIGALRM, main thread only)."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._obj, name)
        if (
            name.startswith("_")
            or not callable(attr)
            or threading.current_thread() is not threading.main_thread()
        ):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            def expire(signum: int, frame: Any) -> None:
                raise CallTimedOut(f"{name} ran longer than {CALL_SECONDS}s")

            previous = signal.signal(signal.SIGALRM, expire)
            signal.setitimer(signal.ITIMER_REAL, CALL_SECONDS)
            try:
                return attr(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)

        call.__signature__ = inspect.signature(attr)  # type: ignore[attr-defined]
        return call


def make(name: str) -> Any:
    module_name, class_name = CLASSES[name]
    cls = getattr(importlib.import_module(f"{PACKAGE}.{module_name}"), class_name)
    obj = cls()
    load = getattr(obj, "_load_scenario", None)
    if load is not None:
        load({})
    return Guarded(obj)


def _factory(name: str) -> Any:
    def factory() -> Any:
        return make(name)

    factory.__name__ = name
    return factory


gorilla_file_system = _factory("gorilla_file_system")
math_api = _factory("math_api")
message_api = _factory("message_api")
posting_api = _factory("posting_api")
ticket_api = _factory("ticket_api")
trading_bot = _factory("trading_bot")
travel_booking = _factory("travel_booking")
vehicle_control = _factory("vehicle_control")
