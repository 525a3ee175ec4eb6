"""`pinb report CH --format brief`: the evidence report in the research brief's required shape (its section 9).

Exactly seven top-level sections with the brief's headings, in its order. Evidence classes use the brief's words:
a run on real Pi is "reproduced locally on Pi X (scripted model and tools)", one on the stand-in "reproduced on
pinb's model of Pi 1.6.0", a documentation or declarations check "reported by a source (Pi X docs / type
declarations)"; anything pinb did not check is UNVERIFIED. pinb never writes a correction: where a change may be
needed it writes "[author: proposed change]", and the author's own fields (`concern`, `priority`, `response` in
the ledger) are "[author]" while empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pinb.kit.report import AuditRow, EvidenceReport
from pinb.kit.status import BackendVerdict
from pinb.scopes.facts import ReleaseFacts
from pinb.scopes.matrix import ScopeRow, describe, scope_rows

#: The brief's seven top-level headings (section 9 of every research brief), in order.
BRIEF_HEADINGS = (
    "1. Context and provenance",
    "2. Claim audit",
    "3. Source ledger",
    "4. Findings",
    "5. Upgrade proposal",
    "6. Experiment opportunities",
    "7. Review checklist",
)
AUTHOR = "[author]"
PROPOSED = "[author: proposed change]"
_BRIEF_FIELD = re.compile(r"^(Chapter URL|Research pack|Chapter prose fingerprint[^:]*):\s*(\S.*)$", re.MULTILINE)


@dataclass(frozen=True)
class BriefInputs:
    """What the brief format reads besides the evidence report."""

    now: datetime
    claims: dict[str, Any] = field(default_factory=dict)
    """The ledger entries by claim id (concern, priority, response, scopes, notes, uncovered)."""
    facts: tuple[ReleaseFacts, ...] = ()
    text_file: str = ""
    excerpt: str = ""
    """How the text was cut (`between "X" and "Y"`), empty for a whole file."""
    text_ends: str = ""
    brief_text: str | None = None
    brief_file: str = ""
    pinb_code: tuple[str, ...] = ()
    releases: tuple[str, ...] = ()
    """Every Pi release the matrix knows (registry releases in the facts), oldest first."""
    not_installable: dict[str, str] = field(default_factory=dict)


def _backend_class(backend: str, modelled: str) -> str:
    if backend == "standin":
        return f"reproduced on pinb's model of Pi {modelled}"
    return f"reproduced locally on Pi {backend.removeprefix('pi@')} (scripted model and tools)"


def _behaviour(verdict: BackendVerdict, modelled: str) -> str:
    what = _backend_class(verdict.backend, modelled)
    if verdict.status == "OBSERVED":
        return f"{what}: OBSERVED — {verdict.evidence} (run `{verdict.run_id}`)"
    if verdict.status == "CONTRADICTED":
        return f"{what}: **CONTRADICTED** — {verdict.evidence} (run `{verdict.run_id}`)"
    return f"{verdict.backend}: UNVERIFIED ({verdict.status}: {verdict.reason or verdict.evidence})"


def _scope_class(row: ScopeRow) -> str:
    return "type declarations" if row.scope == "declarations" else "docs"


def _scope_line(row: ScopeRow) -> str:
    newest = row.cells[-1][0]
    label = f"reported by a source (Pi {row.cells[0][0]}–{newest} {_scope_class(row)}, {row.target})"
    text = f"{label}: {describe(row.spans)}"
    for release, section, entry in row.changes:
        text += f"; changelog of {release}, entry under {section}: “{_short(entry, 200)}”"
    return text


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _author(entry: Any, name: str) -> str:
    value = getattr(entry, name, "") if entry is not None else ""
    return value or AUTHOR


@dataclass(frozen=True)
class _Finding:
    kind: str  # supporting, qualifying, contradictory, unresolved
    claim: str
    text: str


def _findings(report: EvidenceReport, inputs: BriefInputs, rows: dict[str, list[ScopeRow]]) -> list[_Finding]:
    found: list[_Finding] = []
    for audit in report.audit:
        entry = inputs.claims.get(audit.claim_id)
        for verdict in audit.verdicts:
            if verdict.status == "CONTRADICTED":
                found.append(_Finding("contradictory", audit.claim_id, _behaviour(verdict, report.pi_modelled_version)))
            elif verdict.status in ("UNRUN", "NOT EXERCISED", "ERROR", "STALE"):
                found.append(_Finding("unresolved", audit.claim_id, _behaviour(verdict, report.pi_modelled_version)))
        observed = [v for v in audit.verdicts if v.status == "OBSERVED"]
        partial = list(getattr(entry, "uncovered", ()) or ()) if entry is not None else []
        if observed and partial:
            found.append(
                _Finding("qualifying", audit.claim_id, "partial check; not tested: " + "; ".join(map(str, partial)))
            )
        elif observed:
            found.append(
                _Finding(
                    "supporting", audit.claim_id, "; ".join(_behaviour(v, report.pi_modelled_version) for v in observed)
                )
            )
        if audit.kind == "reported":
            found.append(_Finding("unresolved", audit.claim_id, f"not run (reported): {audit.reason}"))
        for row in rows.get(audit.claim_id, []):
            verdicts = {span.verdict for span in row.spans}
            if verdicts == {"holds"}:
                found.append(_Finding("supporting", audit.claim_id, _scope_line(row)))
            elif "holds" in verdicts:
                found.append(_Finding("qualifying", audit.claim_id, "version-bound: " + _scope_line(row)))
            else:
                found.append(_Finding("contradictory", audit.claim_id, _scope_line(row)))
    return found


def render_brief(report: EvidenceReport, inputs: BriefInputs) -> str:
    rows: dict[str, list[ScopeRow]] = {}
    for row in scope_rows(inputs.facts):
        rows.setdefault(row.claim, []).append(row)
    findings = _findings(report, inputs, rows)
    out = [f"# Research report: chapter {report.number}, {report.title}", ""]
    out += _context(report, inputs)
    out += _audit(report, inputs, rows)
    out += _sources(report, inputs, rows)
    out += _findings_section(findings)
    out += _upgrade(report, findings)
    out += _experiments(report, inputs)
    out += _checklist(findings)
    return "\n".join(out)


def _heading(number: int) -> list[str]:
    return [f"## {BRIEF_HEADINGS[number - 1]}", ""]


def _context(report: EvidenceReport, inputs: BriefInputs) -> list[str]:
    stated = dict(_BRIEF_FIELD.findall(inputs.brief_text or ""))
    brief_print = next((v for k, v in stated.items() if k.startswith("Chapter prose fingerprint")), "")
    scope = f"an excerpt of `{inputs.text_file}` ({inputs.excerpt})" if inputs.excerpt else f"`{inputs.text_file}`"
    real_pi = ", ".join(b for b in report.backends_cited if b != "standin") or "no run"
    lines = [
        *_heading(1),
        f"- Chapter identity: {report.number} “{report.title}”, stable id `{report.chapter}`"
        + (f"; chapter URL {stated['Chapter URL']}" if "Chapter URL" in stated else "; chapter URL UNVERIFIED")
        + (f"; research pack {stated['Research pack']}" if "Research pack" in stated else ""),
        f"- Snapshot read: {scope}"
        + (f"; the text read ends with “…{inputs.text_ends}”" if inputs.text_ends else "")
        + (
            "; the rest of the chapter was not read (UNVERIFIED beyond this point)"
            if inputs.excerpt
            else "; read in full"
        ),
        f"- pinb's text fingerprint, of the text read above (sha256 after pinb's whitespace normalisation "
        f"v{report.fingerprint_normalisation}): `{report.text_fingerprint or 'none: text not available'}`",
        f"- The brief's own fingerprint, as the brief `{inputs.brief_file}` states it (of the complete chapter "
        f"prose, by the brief's normalisation; not recomputed by pinb): `{brief_print}`"
        if brief_print
        else "- The brief's own fingerprint: UNVERIFIED (no brief file for this chapter in the book directory)",
        f"- Today's date: {inputs.now.astimezone(UTC).date().isoformat()} (this report was generated at "
        f"{inputs.now.astimezone(UTC).isoformat(timespec='seconds').replace('+00:00', 'Z')}); evidence as of "
        f"{report.generated_at} (the end of the latest run cited)",
        f"- Instrument: pinb {report.pinb_version}"
        + (
            f", code digest(s) of the runs cited: {', '.join(f'`{c}`' for c in inputs.pinb_code)}"
            if inputs.pinb_code
            else ""
        ),
        f"- Execution limits: behaviour is observed with a scripted model and scripted tools (nothing a scenario "
        f"says runs on the host), on real Pi ({real_pi}) "
        f"and on pinb's stand-in, which models Pi {report.pi_modelled_version}; documentation and type declarations "
        f"are read from each release's published tarball"
        + (f" ({', '.join(inputs.releases)})" if inputs.releases else " (none read: UNVERIFIED)"),
    ]
    lines += [f"- Not installable: Pi {version}: {why}" for version, why in inputs.not_installable.items()]
    if report.text_note:
        lines.append(f"- Text note: {report.text_note}")
    return [*lines, ""]


def _evidence_cell(audit: AuditRow, rows: list[ScopeRow], modelled: str, across: str = "") -> str:
    parts = [_behaviour(v, modelled) for v in audit.verdicts]
    if audit.kind == "runnable" and not audit.verdicts:
        parts.append(f"behaviour UNVERIFIED ({audit.status}: {audit.reason or audit.evidence or 'no run'})")
    if across:
        parts.append(f"behaviour across Pi releases: {across}")
    parts += [_scope_line(row) for row in rows]
    if audit.kind == "reported" and not rows:
        parts.append(f"UNVERIFIED (not run: {audit.reason})")
    elif audit.kind == "reported":
        parts.append(f"behaviour UNVERIFIED (not run: {audit.reason})")
    return " · ".join(parts) or "UNVERIFIED"


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    def cell(text: str) -> str:
        return " ".join(str(text).split()).replace("|", "\\|") or "—"

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]


def _audit(report: EvidenceReport, inputs: BriefInputs, rows: dict[str, list[ScopeRow]]) -> list[str]:
    table = []
    across = {row.claim_id: text for row in report.releases for what, text in row.parts if what == "behaviour"}
    for audit in report.audit:
        entry = inputs.claims.get(audit.claim_id)
        table.append(
            (
                f"`{audit.claim_id}`: “{audit.quote}” — {audit.location}",
                _evidence_cell(
                    audit, rows.get(audit.claim_id, []), report.pi_modelled_version, across.get(audit.claim_id, "")
                ),
                _author(entry, "concern"),
                _author(entry, "priority"),
                _author(entry, "response"),
            )
        )
    header = ("Claim and where it appears", "Current evidence", "Concern", "Priority", "Proposed response")
    return _heading(2) + _table(header, table) + [""]


def _sources(report: EvidenceReport, inputs: BriefInputs, rows: dict[str, list[ScopeRow]]) -> list[str]:
    table: list[tuple[str, ...]] = []
    for release_facts in inputs.facts:
        release = release_facts.release
        files = sorted({r.target for r in release_facts.results if r.scope == "documentation"})
        types = sorted({r.target for r in release_facts.results if r.scope == "declarations"})
        bears = sorted({r.claim for r in release_facts.results if r.claim in {a.claim_id for a in report.audit}})
        if not bears:
            continue
        table.append(
            (
                f"`{release.package}@{release.version}` (published tarball): {', '.join(files)}; dist/**/*.d.ts "
                f"({', '.join(types)})",
                f"integrity `{release.integrity}`; published {release.published} (registry record)",
                release.tarball,
                "full text read by pinb (the files named; the types named, by the TypeScript compiler API)",
                ", ".join(f"`{c}`" for c in bears),
                "what the package's own documents and types say, not how Pi behaves; other files not read",
                f"verified against the integrity hash and accessed {release_facts.accessed}",
            )
        )
    for entry in report.runs:
        if not entry.record.backend.startswith("pi@"):
            continue
        packages = ", ".join(f"{n} {v}" for n, v in sorted(entry.record.environment.pi_packages.items()))
        table.append(
            (
                f"Pi packages run by pinb ({entry.record.backend}): {packages or 'UNVERIFIED'}",
                "installed from the committed lock file (reference/pi-<version>/package-lock.json)",
                "https://www.npmjs.com/package/@earendil-works/pi-coding-agent",
                "executed (behaviour observed), not read as text",
                f"the runnable claims of run `{entry.run_id}`",
                "a scripted model and scripted tools; one scenario per claim, not every path",
                f"run finished {entry.record.finished_at}",
            )
        )
    if inputs.brief_file:
        table.append(
            (
                f"Research brief `{inputs.brief_file}` (book directory)",
                "the chapter identity and fingerprint it states",
                "UNVERIFIED (local file)",
                "full text read by pinb",
                "every claim (the chapter text is its excerpt)" if inputs.excerpt else "chapter identity",
                "an excerpt of the chapter, not its whole text" if inputs.excerpt else "—",
                f"read {inputs.now.astimezone(UTC).date().isoformat()}",
            )
        )
    header = (
        "Source",
        "Verified metadata",
        "URL",
        "Reading status",
        "Claims it bears on",
        "Limitations",
        "Verification and access dates",
    )
    return _heading(3) + _table(header, table or [("none", "", "", "", "", "", "")]) + [""]


def _findings_section(findings: list[_Finding]) -> list[str]:
    lines = _heading(4)
    for kind, title in (
        ("supporting", "Supporting"),
        ("qualifying", "Qualifying"),
        ("contradictory", "Contradictory"),
        ("unresolved", "Unresolved"),
    ):
        lines += [f"### {title}", ""]
        chosen = [f for f in findings if f.kind == kind]
        lines += [f"- `{f.claim}`: {f.text}" for f in chosen] or ["- none"]
        lines.append("")
    return lines


def _upgrade(report: EvidenceReport, findings: list[_Finding]) -> list[str]:
    quotes = {a.claim_id: (a.quote, a.location) for a in report.audit}
    lines = [
        *_heading(5),
        "pinb proposes no wording. Each sentence below has a contradictory or qualifying finding (section 4); "
        "the change, its rationale and its tradeoffs are the author's.",
        "",
    ]
    claims = list(dict.fromkeys(f.claim for f in findings if f.kind in ("contradictory", "qualifying")))
    for claim in claims:
        quote, location = quotes[claim]
        lines.append(f"- `{claim}` ({location}): “{_short(quote, 240)}” → {PROPOSED}")
    return lines + (["- none"] if not claims else []) + [""]


def _experiments(report: EvidenceReport, inputs: BriefInputs) -> list[str]:
    lines = _heading(6)
    stubs: list[list[str]] = []
    for audit in report.audit:
        if audit.kind == "reported":
            stubs.append(
                [
                    f"**UNRUN** — `{audit.claim_id}` ({audit.location}): an experiment for “{_short(audit.quote)}”",
                    "  - Method: a scenario that exercises the sentence on the stand-in and on real Pi "
                    f"(today not run: {audit.reason})",
                    "  - Success: the judge says OBSERVED on both backends, and fails under a named fault",
                    "  - Failure: CONTRADICTED on either backend",
                    f"  - Command, once the experiment exists: `pinb verify {report.chapter} --backend pi --force`",
                ]
            )
        entry = inputs.claims.get(audit.claim_id)
        for part in getattr(entry, "uncovered", ()) or ():
            stubs.append(
                [
                    f"**UNRUN** — `{audit.claim_id}`: the part its check does not test: “{part}”",
                    "  - Method: a witness whose premise includes this part",
                    "  - Success: OBSERVED with this part covered; Failure: CONTRADICTED",
                    f"  - Command: `pinb verify {report.chapter} --backend pi --force`",
                ]
            )
    run = {b.removeprefix("pi@") for b in report.backends_cited if b.startswith("pi@")}
    for version in inputs.releases:
        if version in run:
            continue
        why = inputs.not_installable.get(version, "no run of this chapter on this release is on record")
        stubs.append(
            [
                f"**UNRUN** — every runnable claim of {report.chapter} on Pi {version}",
                f"  - Method: the chapter's experiments on real Pi {version} (reason not run: {why})",
                "  - Success: each claim's verdict on this release is recorded (OBSERVED or CONTRADICTED)",
                "  - Failure: the run does not complete, or a claim is ERROR",
                f"  - Command: `pinb reference install --pi-version {version} && pinb verify {report.chapter} "
                f"--backend pi --pi-version {version} --force`",
            ]
        )
    for stub in stubs:
        lines += [f"- {stub[0]}", *stub[1:]]
    return lines + (["- none"] if not stubs else []) + [""]


def _checklist(findings: list[_Finding]) -> list[str]:
    lines = _heading(7)
    decisive = [f for f in findings if f.kind in ("contradictory", "qualifying", "unresolved")]
    for finding in decisive:
        lines.append(
            f"- [ ] `{finding.claim}` ({finding.kind}): accept / revise / defer / reject — {AUTHOR}; pinb's reason to "
            f"look: {_short(finding.text, 200)}"
        )
    return lines + (["- none"] if not decisive else []) + [""]


def brief_inputs(report: EvidenceReport, chapter_id: str, now: datetime | None = None) -> BriefInputs:
    """Everything the brief format reads besides the report: the ledger, the scope facts, the book directory."""
    from pinb.backends import PI_RELEASES
    from pinb.chapters.book import book_dir, cut
    from pinb.chapters.registry import folders
    from pinb.scopes.facts import load_all

    found = folders().get(chapter_id)
    facts = tuple(load_all())
    claim_ids = {a.claim_id for a in report.audit}
    facts = tuple(f for f in facts if any(r.claim in claim_ids for r in f.results))
    ledger = found.ledger if found is not None else None
    book = book_dir()
    text_file = ledger.text.file if ledger is not None else ""
    excerpt = ""
    ends = ""
    if ledger is not None:
        source = ledger.text
        if source.start or source.end:
            excerpt = f"after the line “{source.start or 'the start'}”, up to the line “{source.end or 'the end'}”"
        if book is not None and (book / source.file).is_file():
            text = cut((book / source.file).read_text(encoding="utf-8"), source)
            ends = _short(text.strip()[-80:], 80)
    brief = brief_file_for(book, chapter_id, text_file)
    releases = tuple(f.release.version for f in facts)
    return BriefInputs(
        now=now or datetime.now(UTC),
        claims={c.id: c for c in ledger.claims} if ledger is not None else {},
        facts=facts,
        text_file=text_file,
        excerpt=excerpt,
        text_ends=ends,
        brief_text=brief.read_text(encoding="utf-8") if brief is not None else None,
        brief_file=brief.name if brief is not None else "",
        pinb_code=tuple(dict.fromkeys(e.record.inputs.pinb_code for e in report.runs if e.record.inputs.pinb_code)),
        releases=releases,
        not_installable={r.version: r.note for r in PI_RELEASES if "app" not in r.layers and r.version in releases},
    )


def brief_file_for(book: Path | None, chapter_id: str, text_file: str) -> Path | None:
    """The chapter's research brief in the book directory: its text file when that is a brief, else
    `brief-<chapter id>.txt`."""
    if book is None:
        return None
    for name in (text_file, f"brief-{chapter_id}.txt"):
        if name.startswith("brief-") and (book / name).is_file():
            return book / name
    return None


__all__ = ["AUTHOR", "BRIEF_HEADINGS", "PROPOSED", "BriefInputs", "brief_file_for", "brief_inputs", "render_brief"]
