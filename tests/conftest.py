"""Suite-wide settings: Hypothesis keeps no example database and writes its other files (the
constants it mines from source) into a temporary folder removed when the run ends, so a test run
leaves no ``.hypothesis/`` folder in the clone (every seeded test reproduces without one), and
draws the same examples on every run. Nothing Hypothesis decides depends on the clock: no
deadline and no ``too_slow`` health check, the two that a loaded CI machine would fail. Nor on
which tests ran before: no constants from the source of the modules imported so far.

Bytecode is cached even where the environment says not to (``PYTHONDONTWRITEBYTECODE``, which
container images set): the suite starts dozens of Python processes (the xdist workers, the CLI
as a user runs it, spawned job pools, Ray's workers), and each compiled every module it
imported again, a tenth of the suite's CPU time. The caches go where Python puts them
(``__pycache__`` folders, which git ignores)."""

from __future__ import annotations

import os
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.internal.conjecture import providers as _providers

# loaded by the xdist controller before it starts the workers, which inherit the environment
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

_HOME = tempfile.TemporaryDirectory(prefix="envfactory-tests-hypothesis-")
set_hypothesis_home_dir(_HOME.name)
# derandomize: every property test draws the same examples on every run and machine, so a run
# of CI can never fail where the one before passed (a test that found a bug once would find it
# every time); each test's own seed comes from its name. No deadline and no too_slow health
# check: both read the clock, so a test that set neither would fail under load where it passed idle
settings.register_profile(
    "envfactory-tests",
    database=None,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("envfactory-tests")

# Hypothesis mixes into its draws the constants it finds in the source of every local module
# imported so far (``providers._get_local_constants``), so a derandomized test drew other
# examples after other tests had imported other modules: the solver-agreement test's count of
# string readings failed when run after the relay tests alone, and passed in the whole suite.
# Which modules a worker has imported depends on which tests xdist gave it first; with none
# mixed in, a test's examples depend on its name alone.
if hasattr(_providers, "_get_local_constants"):
    _NO_CONSTANTS = _providers.Constants()
    _providers._get_local_constants = lambda: _NO_CONSTANTS


@pytest.fixture
def light_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenth of the solver's default planning effort for a fuzz run bounded by examples, in
    tests that check something other than how deep the planner reaches (no finding on a correct
    implementation, the wire): its prefixes still reach most of what more effort does (auction
    68 of 73 clause outcomes covered, as with three times the effort; courier 76 of 111 against
    85), and the planning took most of each such test's time (auction 4.1 s against 9.8)."""
    from envfactory.fuzz import runner

    monkeypatch.setattr(runner, "REACH_TIMEOUT", 1.0)


@pytest.fixture
def no_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fuzz run bounded by examples that never stops to ask the solver for prefixes: for tests
    of what the search reaches alone, or of something the prefixes do not touch (the wire)."""
    from envfactory.fuzz import runner

    monkeypatch.setattr(runner, "REACH_SHARE", 2.0)
    monkeypatch.setattr(runner, "PLAN_AT", 2.0)
