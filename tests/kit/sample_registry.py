"""The kit's own small chapters: each points at one notebook of `tests/kit/notebooks/`."""

from __future__ import annotations

from pinb.claims import Claim
from pinb.kit.claims import Chapter

FINGERPRINT = "0" * 64


def _claims(chapter: str, runnable: tuple[str, ...], reported: tuple[tuple[str, str], ...] = ()) -> tuple[Claim, ...]:
    claims = [
        Claim(id=claim_id, chapter=chapter, quote=f"The book says {claim_id}.", location=f"Section ¶{n}")
        for n, claim_id in enumerate(runnable, start=1)
    ]
    claims += [
        Claim(
            id=claim_id,
            chapter=chapter,
            quote=f"Reported: {claim_id}.",
            location="Sidebar",
            kind="reported",
            reason=reason,
            backends=(),
        )
        for claim_id, reason in reported
    ]
    return tuple(claims)


def chapters() -> dict[str, Chapter]:
    specs = [
        (
            "kt-01-chapter",
            "01",
            "Claims that hold",
            "holds",
            ("kt-01.math.adds", "kt-01.math.multiplies"),
            (("kt-01.history.fork", "reported from a fork's change records; nothing here can run them"),),
        ),
        ("kt-02-chapter", "02", "A finding", "finding", ("kt-02.text.upper", "kt-02.text.words"), ()),
        (
            "kt-03-chapter",
            "03",
            "A cell that raises",
            "raises",
            ("kt-03.steps.first", "kt-03.steps.guarded", "kt-03.steps.after"),
            (),
        ),
        ("kt-04-chapter", "04", "A notebook too slow", "slow", ("kt-04.time.starts", "kt-04.time.finishes"), ()),
        ("kt-05-chapter", "05", "A kernel that dies", "dies", ("kt-05.kernel.before",), ()),
        ("kt-06-chapter", "06", "No parameters cell", "noparams", ("kt-06.none.at-all",), ()),
        ("kt-07-chapter", "07", "A notebook that writes a trace", "traces", ("kt-07.trace.written",), ()),
        (
            "kt-08-chapter",
            "08",
            "A notebook stopped in its long cell",
            "waits",
            ("kt-08.wait.before", "kt-08.wait.during", "kt-08.wait.after"),
            (),
        ),
    ]
    return {
        cid: Chapter(
            id=cid,
            number=num,
            title=title,
            notebook=f"notebooks/{nb}.ipynb",
            text_fingerprint=FINGERPRINT,
            claims=_claims(cid, runnable, reported),
        )
        for cid, num, title, nb, runnable, reported in specs
    }
