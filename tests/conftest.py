"""Shared pytest configuration for Kontor's test suite.

Registers the Hypothesis "ci" profile (no per-example deadline, so slow or
loaded machines do not produce flaky failures) and loads it.
"""

from hypothesis import settings

settings.register_profile("ci", deadline=None)
settings.load_profile("ci")
