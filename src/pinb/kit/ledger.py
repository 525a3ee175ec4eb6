"""The committed ledger: `reports/<chapter>.md`, `reports/<chapter>.json`, the README's ledger table, and in pinb's
own checkout the recorded-verdict snapshots the notebooks show (`src/pinb/recorded/<chapter>.json`).

Each is rendered from the run store and the registry alone, never from the machine reading them: the same runs
give the same text on every machine (the reports say which environment each run was recorded in). `pinb verify`
rewrites them after recording a run, `pinb report --all` on demand, and `pinb report --all --check` (and a test)
says which committed ones differ from what the runs give.

A project opts in by having a `reports/` folder, or a README with the markers below.

Where a chapter's text is not available (a clone without the book beside it), its files would be rendered with its
quotes and fingerprint unverified: `pinb verify` and `pinb runs rm`/`prune` then leave them as committed
(`weaker`) and say so, rather than replace verified evidence with weaker; `pinb report --all` writes them on demand.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from pinb.errors import KitError
from pinb.files import NOTEBOOK_LIMIT, FileError, read_text, write_atomic
from pinb.kit.project import Project
from pinb.kit.recorded import snapshot_path, snapshot_text
from pinb.kit.report import build_report, render_json, render_markdown
from pinb.kit.status import chapter_statuses
from pinb.kit.summary import summary_markdown

REPORTS_DIR = "reports"
README = "README.md"
START = "<!-- ledger:start -->"
END = "<!-- ledger:end -->"


def rendered(project: Project, *, force_reports: bool = False) -> dict[Path, str]:
    """Every ledger file the project keeps, as the run store renders it now; `KitError` when some run record
    cannot be read (the ledger would silently lose what it said)."""
    listing = project.store.list()
    if listing.unreadable:
        raise KitError(f"not rewriting the ledger: {listing.unreadable[0].problem}")
    runs = listing.runs
    files: dict[Path, str] = {}
    reports = project.root / REPORTS_DIR
    if force_reports or reports.is_dir():
        for chapter in project.chapters.values():
            report = build_report(project, chapter, runs)
            files[reports / f"{chapter.id}.md"] = render_markdown(report)
            files[reports / f"{chapter.id}.json"] = render_json(report)
    snapshots = {chapter: snapshot_path(project, chapter) for chapter in project.chapters.values()}
    for chapter, path in snapshots.items():
        if path is not None:
            files[path] = snapshot_text(project, chapter, runs)
    readme = project.root / README
    text = _read(readme)
    if text is not None and START in text and END in text:
        chapters = project.chapters.values()
        statuses = [status for chapter in chapters for status in chapter_statuses(project, chapter, runs)]
        files[readme] = replace_block(text, summary_markdown(statuses))
    return files


def replace_block(text: str, table: str) -> str:
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{table}{END}{after}"


def stale(project: Project) -> list[Path]:
    """The ledger files whose committed text differs from what the runs give (missing ones included)."""
    return [path for path, text in rendered(project).items() if _read(path) != text]


def weaker(project: Project) -> dict[Path, str]:
    """The ledger files that would be rendered from a chapter whose text is not available here, each with why:
    its reports and snapshot, and the README's table when any chapter's text is missing."""
    missing = {
        chapter.id: getattr(chapter, "text_note", "") or "the chapter text is not available"
        for chapter in project.chapters.values()
        if not chapter.text_fingerprint
    }
    files: dict[Path, str] = {}
    for chapter in project.chapters.values():
        if chapter.id in missing:
            why = missing[chapter.id]
            files[project.root / REPORTS_DIR / f"{chapter.id}.md"] = why
            files[project.root / REPORTS_DIR / f"{chapter.id}.json"] = why
            snapshot = snapshot_path(project, chapter)
            if snapshot is not None:
                files[snapshot] = why
    if missing:
        reasons = set(missing.values())
        shared = reasons.pop() if len(reasons) == 1 else None
        files[project.root / README] = shared or "; ".join(f"{cid}: {why}" for cid, why in missing.items())
    return files


def refresh(project: Project, *, force_reports: bool = False, keep: Collection[Path] = ()) -> list[Path]:
    """Rewrite the ledger files that differ, except those in `keep`; return them."""
    changed = []
    for path, text in rendered(project, force_reports=force_reports).items():
        if path in keep or _read(path) == text:
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KitError(f"cannot write {path}: {exc.strerror or exc}") from None
        try:
            write_atomic(path, text)  # a full disk leaves the old file whole, never a truncated one
        except FileError as exc:
            raise KitError(str(exc)) from None
        changed.append(path)
    return changed


def held_back(project: Project, weak: dict[Path, str]) -> dict[Path, str]:
    """Of the `weaker` files, those the runs would now change (what `refresh(keep=weak)` left as committed)."""
    if not weak:  # every chapter's text is here: nothing was held back, and nothing needs rendering again
        return {}
    return {path: weak[path] for path in stale(project) if path in weak}


def _read(path: Path) -> str | None:
    try:
        return read_text(path, limit=NOTEBOOK_LIMIT)
    except FileError:
        return None
