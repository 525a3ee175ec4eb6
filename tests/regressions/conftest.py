"""The kit's fixtures (a throw-away project of the kit's notebooks, synthetic runs) for the kit's regressions."""

from kit.conftest import project, record_run  # noqa: F401
