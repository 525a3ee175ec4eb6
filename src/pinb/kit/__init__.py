"""pinb.kit: the claims ledger. Notebooks record claim outcomes (`check`, `checking`, `skip`); `pinb verify` runs
chapter notebooks headlessly and records each run under `runs/`; `pinb status` and `pinb report` derive every
claim's status from those records alone.

A chapter notebook the kit can run:

- has one cell tagged `parameters` declaring `backend = "standin"` and `pi_version = "1.6.0"` (plus, optionally,
  `artifacts_dir`: the kit then injects a folder inside the run whose files are hashed into the run record);
- calls `use_backend(backend, pi_version)` right after it, so every outcome names the backend it was observed on;
- checks each runnable claim with `check(claim_id, holds, evidence)` or `with checking(claim_id) as c: ...`.

The notebook API is re-exported here; execution (papermill, nbclient) lives in `pinb.kit.execute` and is imported
only when something runs.
"""

from pinb.kit.claims import (
    CLAIM_MIME,
    Chapter,
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
