"""pinb.kit: the claims ledger. Notebooks record claim outcomes (`check`, `checking`, `skip`); `pinb verify` runs
chapter notebooks headlessly and records each run under `runs/`; `pinb status` and `pinb report` derive every
claim's status from those records alone.

The notebook API is re-exported here; execution (papermill, nbclient) lives in `pinb.kit.execute` and is imported
only when something runs.
"""

from pinb.kit.claims import (
    CLAIM_MIME,
    Chapter,
    Claim,
    ClaimCheck,
    ClaimOutcome,
    check,
    checking,
    recorded,
    skip,
    use_backend,
)
from pinb.kit.project import Project, load_project

__all__ = [
    "CLAIM_MIME",
    "Chapter",
    "Claim",
    "ClaimCheck",
    "ClaimOutcome",
    "Project",
    "check",
    "checking",
    "load_project",
    "recorded",
    "skip",
    "use_backend",
]
