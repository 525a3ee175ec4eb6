from __future__ import annotations

import asyncio

import pytest

from pinb.testing.check_judges import JudgeReport, acheck_judges


@pytest.fixture(scope="session")
def report() -> JudgeReport:
    """`pinb claims check-judges` on every chapter, run once for the tests that read it."""
    return asyncio.run(acheck_judges())
