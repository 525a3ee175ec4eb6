from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pinb.chapters import registry
from pinb.chapters.ledger import Ledger
from pinb.kit.notebook import inspect_notebook

REPO = Path(__file__).resolve().parents[2]
LEDGERS = [found.ledger for found in registry.folders().values()]
CLAIM_MIME = "application/vnd.pinb.claim+json"


@pytest.mark.parametrize("ledger", LEDGERS, ids=lambda ledger: ledger.id)
def test_notebook_committed_without_outputs_with_a_parameters_cell(ledger: Ledger) -> None:
    path = REPO / ledger.notebook
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    assert all(cell["outputs"] == [] and cell["execution_count"] is None for cell in code)
    title, findings, how_to, parameters = nb["cells"][:4]
    assert "".join(title["source"]).startswith("# ") and "".join(how_to["source"]).startswith("## How to use")
    shows_map = f"display(show_findings({ledger.id!r}, recorded_verdicts({ledger.id!r})))"
    assert shows_map in "".join(findings["source"])  # the map, right under the title
    assert "parameters" in parameters["metadata"].get("tags", []) and parameters is code[1]
    names = inspect_notebook(path).parameter_names
    assert {"backend", "pi_version", "pinb_pip_spec", "artifacts_dir"} <= set(names)
    sources = "".join("".join(cell["source"]) for cell in code)
    markdown = "".join("".join(cell["source"]) for cell in nb["cells"] if cell["cell_type"] == "markdown")
    for spec in ledger.claims:
        if spec.kind == "reported":  # in its section's markdown with its reason, and no code cell
            assert repr(spec.id) not in sources and f"`{spec.id}` — **reported, not run**" in markdown, spec.id
        else:  # one card cell per claim: it checks the claim and shows the card
            assert sources.count(f"card = await cards.check({spec.id!r}") == 1, spec.id
    # the setup cells show their outputs, their code one click away
    hidden = [cell for cell in code if cell["metadata"].get("jupyter", {}).get("source_hidden")]
    assert len(hidden) == 3 and parameters not in hidden


def test_chapter_16_fits_in_sixty_cells() -> None:
    nb = json.loads((REPO / "notebooks" / "16-chapter.ipynb").read_text(encoding="utf-8"))
    assert len(nb["cells"]) <= 60


def test_notebooks_match_their_generator() -> None:
    done = subprocess.run([sys.executable, str(REPO / "notebooks" / "build.py"), "--check"], capture_output=True)
    assert done.returncode == 0, done.stderr.decode()


def _execute(path: Path, tmp_path: Path, **parameters: object) -> list[dict]:
    """Inject parameters as papermill does, then execute with nbclient (papermill's per-cell saves cost minutes)."""
    import nbformat
    from nbclient import NotebookClient
    from papermill.parameterize import parameterize_notebook

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:  # papermill's own preparation step, which parameterize_notebook expects
        cell.metadata.setdefault("tags", [])
    nb.metadata.setdefault("papermill", {})
    nb = parameterize_notebook(nb, parameters)
    NotebookClient(nb, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    return [o["data"][CLAIM_MIME] for c in nb.cells for o in c.get("outputs", []) if CLAIM_MIME in o.get("data", {})]


@pytest.mark.kernel
@pytest.mark.parametrize("ledger", LEDGERS, ids=lambda ledger: ledger.id)
def test_notebook_runs_headless_on_the_standin(ledger: Ledger, tmp_path: Path) -> None:
    outcomes = _execute(REPO / ledger.notebook, tmp_path, backend="standin", artifacts_dir=str(tmp_path / "artifacts"))
    checked = {o["claim_id"] for o in outcomes if o["outcome"] != "skipped"}
    skipped = {o["claim_id"]: o["evidence"] for o in outcomes if o["outcome"] == "skipped"}
    runnable = {s.id for s in ledger.claims if s.kind == "runnable" and "standin" in s.backends}
    assert checked == runnable
    # Every runnable claim the stand-in does not check is recorded as skipped, with its reason; reported claims
    # have no code cell, so the run records nothing for them (status says why they are UNRUN, from the ledger).
    assert set(skipped) == {s.id for s in ledger.claims if s.kind == "runnable"} - checked and all(skipped.values())
    assert all(o["backend"] == "standin" and o["outcome"] != "error" for o in outcomes), outcomes
    assert any((tmp_path / "artifacts").glob("*.jsonl"))


def test_build_check_ignores_a_saved_jupyter_session(tmp_path: Path) -> None:
    from pinb.testing.jupyter import save_as_jupyter

    for name in ("README.md", "pyproject.toml"):
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    for ledger in LEDGERS:
        (tmp_path / ledger.notebook).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / ledger.notebook).write_bytes((REPO / ledger.notebook).read_bytes())
    build = [sys.executable, str(REPO / "notebooks" / "build.py"), "--check", "--root", str(tmp_path)]
    saved = tmp_path / LEDGERS[0].notebook
    save_as_jupyter(saved)
    done = subprocess.run(build, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (
        0,
        f"{LEDGERS[0].notebook}: up to date, with outputs of a Jupyter session "
        "(harmless; python notebooks/build.py clears them)\n",
    )
    nb = json.loads(saved.read_text(encoding="utf-8"))
    nb["cells"][-1]["source"].append("\n# an edit")
    saved.write_text(json.dumps(nb), encoding="utf-8")
    done = subprocess.run(build, capture_output=True, text=True)
    stale = f"out of date (run python notebooks/build.py): {LEDGERS[0].notebook}\n"
    assert (done.returncode, done.stderr) == (1, stale)
