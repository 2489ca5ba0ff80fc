"""Suite-wide settings: Hypothesis keeps no example database and writes its other files (the
constants it mines from source) into a temporary folder removed when the run ends, so a test run
leaves no ``.hypothesis/`` folder in the clone (every seeded test reproduces without one)."""

from __future__ import annotations

import tempfile

from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

_HOME = tempfile.TemporaryDirectory(prefix="envfactory-tests-hypothesis-")
set_hypothesis_home_dir(_HOME.name)
settings.register_profile("envfactory-tests", database=None)
settings.load_profile("envfactory-tests")
