"""The chapters' witness families name hypothesis's strategies through `pinb.chapters.properties.st`, which imports
hypothesis on first use: importing a chapter's claims never does, and a deferred `@st.composite` is hypothesis's."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis.strategies import SearchStrategy

from pinb.chapters.properties import st


def test_importing_every_chapter_property_module_leaves_hypothesis_unimported() -> None:
    code = (
        "import sys\n"
        "import pinb.chapters.ch01.properties, pinb.chapters.ch16.properties\n"
        "import pinb.chapters.ch01.experiments, pinb.chapters.ch16.experiments\n"
        "print('hypothesis' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@st.composite
def _pair(draw: st.DrawFn, low: int = 0) -> tuple[int, int]:
    first = draw(st.integers(low, 10))
    return first, draw(st.integers(first, 20))


def test_a_deferred_composite_is_a_hypothesis_strategy_that_takes_its_arguments() -> None:
    strategy = _pair(low=5)
    assert isinstance(strategy, SearchStrategy)
    seen: list[tuple[int, int]] = []

    @settings(max_examples=30, database=None)
    @given(strategy)
    def check(pair: tuple[int, int]) -> None:
        seen.append(pair)
        assert 5 <= pair[0] <= pair[1] <= 20

    check()
    assert seen
    assert _pair.__name__ == "_pair"
