"""Evidence is observation: what a judge reports is what its run measured, never the claim's own wording.

Two checks. Dynamically: a judge's evidence must change when what it observed changes, so under each fault that
flips the claim the evidence differs from the evidence of the faithful run (a fixed sentence would not). Statically:
no string literal that goes into a judge's evidence copies a run of the claim's quote, the way an explanation
posing as a measurement would (expected values, compared with what was seen, may quote the book: they are not
evidence).
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

from pinb.chapters import registry
from pinb.chapters.experiments import (
    BookExampleExperiment,
    PackageExperiment,
    ProbeExperiment,
    ScenarioExperiment,
)
from pinb.testing.check_judges import JudgeReport

#: Consecutive words of the quote an evidence literal may not repeat ("pi-tui depends on" is a label, five words
#: of the sentence are its wording).
RUN = 5
_WORD = re.compile(r"[a-z0-9]+")


def fixed_evidence(report: JudgeReport) -> list[str]:
    """Claims whose evidence under a fault that flips them is word for word the faithful run's evidence."""
    return [
        f"{claim.claim_id} under {check.fault}: {check.evidence!r}"
        for claim in report.claims
        if claim.baseline == "OBSERVED"
        for check in claim.faults
        if check.status == "CONTRADICTED" and check.evidence == claim.reason
    ]


def test_evidence_changes_when_the_observation_changes(report: JudgeReport) -> None:
    assert fixed_evidence(report) == []


def test_a_fixed_sentence_is_reported() -> None:
    from pinb.testing.check_judges import ClaimCheck, FaultCheck

    said = "the core ran alone"
    fixed = JudgeReport([ClaimCheck("c", "ch", "OBSERVED", said, [FaultCheck("f", "CONTRADICTED", True, said)])], False)
    assert fixed_evidence(fixed) == ["c under f: 'the core ran alone'"]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("’", "'"))


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


def _judges(claim_id: str) -> list[Callable[..., Any]]:
    experiment = registry.claim(claim_id).experiment
    if isinstance(experiment, ScenarioExperiment | PackageExperiment):
        return [experiment.judge]
    if isinstance(experiment, ProbeExperiment):
        return [experiment.probe]
    if isinstance(experiment, BookExampleExperiment):
        return [experiment.judge, *([experiment.standin.judge] if experiment.standin else [])]
    return []


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _all_literals(function: Any) -> list[str]:
    """Every string literal of a helper function (its docstring left out)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError):
        return []
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
    return [s for node in ast.walk(tree) if node is not doc for s in _strings(node) if isinstance(node, ast.Constant)]


def evidence_literals(function: Callable[..., Any]) -> list[str]:
    """The string literals that can reach a `Finding`'s evidence: those inside its evidence argument, those
    assigned (in the same function) to a name that argument uses, and those of a module function it calls."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    assigned: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).extend(_strings(node.value))
    found: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding"):
            continue
        evidence = [kw.value for kw in node.keywords if kw.arg == "evidence"] or node.args[1:2]
        for arg in evidence:
            found.extend(_strings(arg))
            for name in (n.id for n in ast.walk(arg) if isinstance(n, ast.Name)):
                found.extend(assigned.get(name, ()))
                helper = function.__globals__.get(name)
                if inspect.isfunction(helper) and helper.__module__.startswith("pinb."):
                    found.extend(_all_literals(helper))
    return found


def test_no_evidence_literal_copies_the_claims_wording() -> None:
    copied = []
    for folder in registry.folders().values():
        for spec in folder.ledger.claims:
            if spec.kind != "runnable":
                continue
            quote = _runs(_words(" ".join(spec.quotes)))
            for function in _judges(spec.id):
                # Prose only: a literal without a space is a name or a key the judge reads (a package name).
                for literal in (text for text in evidence_literals(function) if " " in text.strip()):
                    if _runs(_words(literal)) & quote:
                        copied.append(f"{spec.id} ({function.__name__}): {literal!r}")
    assert copied == []


def test_the_scan_finds_a_restated_claim() -> None:
    from pinb.chapters.experiments import Finding

    def restating(traces: Any) -> Finding:
        note = " (the core runs without a terminal, as the book says)"
        return Finding(True, f"{len(traces)} traces" + note)

    literals = evidence_literals(restating)
    sentence = "The core runs without a terminal, without an application, and without a provider-specific model."
    quote = _runs(_words(sentence))
    assert any(_runs(_words(literal)) & quote for literal in literals)
