"""Evidence is observation: what a check reports is what its run measured, never the claim's own wording.

Two checks. Dynamically: a check's evidence must change when what it observed changes, so under each fault that
flips the claim the evidence differs from the evidence of the faithful run (a fixed sentence would not). Statically:
no string literal that goes into a property's evidence copies a run of the claim's quote, the way an explanation
posing as a measurement would. A property's evidence is its premise's words and its observed value in words, so
every premise and every observed function (and a property's own `words`) is scanned; expected values, compared
with what was seen, may quote the book: they are not evidence.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

from pinb.chapters import registry
from pinb.chapters.properties import Premise, Property, to_words
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


def _properties(claim_id: str) -> list[Property]:
    """The claim's properties on every backend (the book's program on pi and its port on the stand-in are two)."""
    experiment = registry.claim(claim_id).experiment
    found = [experiment.on(backend) for backend in ("standin", "pi")] if experiment is not None else []
    return list({id(e.property): e.property for e in found if e is not None}.values())


def _evidence_functions(prop: Property) -> list[tuple[str, Callable[..., Any]]]:
    functions: list[tuple[str, Callable[..., Any]]] = [("premise", prop.premise), ("observed", prop.observed)]
    return functions + ([("words", prop.words)] if prop.words is not to_words else [])


def _tree(function: Callable[..., Any]) -> ast.AST | None:
    """The function's syntax tree; a lambda's from the statement it stands in (trimmed until it parses)."""
    try:
        source = textwrap.dedent(inspect.getsource(function)).strip()
    except (OSError, TypeError):
        return None
    if function.__name__ != "<lambda>":
        return ast.parse(source)
    start = source.find("lambda")
    text = source[start:]
    while text:
        try:
            tree = ast.parse(f"({text})")
        except SyntaxError:
            text = text[:-1]
            continue
        return next(n for n in ast.walk(tree) if isinstance(n, ast.Lambda))
    return None


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


def _names_and_helpers(node: ast.AST, function: Callable[..., Any], assigned: dict[str, list[str]]) -> list[str]:
    found: list[str] = []
    for name in (n.id for n in ast.walk(node) if isinstance(n, ast.Name)):
        found.extend(assigned.get(name, ()))
        helper = function.__globals__.get(name)
        if inspect.isfunction(helper) and helper.__module__.startswith("pinb."):
            found.extend(_all_literals(helper))
    return found


def evidence_literals(function: Callable[..., Any], role: str = "observed") -> list[str]:
    """The string literals that can reach a property's evidence through `function`.

    A premise (`role="premise"`): those inside what it says (`Premise`'s second argument), those assigned in the
    same function to a name that argument uses, and those of a module function it calls there. An observed value
    or a `words` function: every literal it holds (its docstring, dict keys and subscripts left out: those name
    what is read, not what was seen), and those of a module function it calls."""
    tree = _tree(function)
    if tree is None:
        return []
    assigned: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).extend(_strings(node.value))
    found: list[str] = []
    if role == "premise":
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Premise"):
                continue
            for arg in [kw.value for kw in node.keywords if kw.arg == "says"] or node.args[1:2]:
                found.extend(_strings(arg))
                found.extend(_names_and_helpers(arg, function, assigned))
        return found
    skipped = {id(key) for n in ast.walk(tree) if isinstance(n, ast.Dict) for key in n.keys if key is not None}
    skipped |= {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    body = getattr(tree, "body", None)
    first = body[0] if isinstance(body, list) and body else None
    if isinstance(tree, ast.Module) and isinstance(first, ast.FunctionDef):
        inner = first.body
        if inner and isinstance(inner[0], ast.Expr) and isinstance(inner[0].value, ast.Constant):
            skipped.add(id(inner[0].value))
    found += [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skipped
    ]
    return found + _names_and_helpers(tree, function, {})


def test_no_evidence_literal_copies_the_claims_wording() -> None:
    copied, scanned = [], 0
    for folder in registry.folders().values():
        for spec in folder.ledger.claims:
            if spec.kind != "runnable":
                continue
            quote = _runs(_words(" ".join(spec.quotes)))
            for prop in _properties(spec.id):
                for role, function in _evidence_functions(prop):
                    scanned += 1
                    # Prose only: a literal without a space is a name or a key the check reads (a package name).
                    for literal in (text for text in evidence_literals(function, role) if " " in text.strip()):
                        if _runs(_words(literal)) & quote:
                            copied.append(f"{spec.id} ({role} {function.__name__}): {literal!r}")
    assert copied == []
    assert scanned >= 2 * sum(1 for f in registry.folders().values() for c in f.ledger.claims if c.kind == "runnable")


SENTENCE = "The core runs without a terminal, without an application, and without a provider-specific model."


def test_the_scan_finds_a_restated_claim() -> None:
    def premise(w: Any) -> Premise:
        note = " (the core runs without a terminal, as the book says)"
        return Premise(bool(w.traces), f"{len(w.traces)} traces" + note)

    def observed(w: Any) -> str:
        return "the core runs without a terminal" if w.traces else "no run"

    quote = _runs(_words(SENTENCE))
    for role, function in (("premise", premise), ("observed", observed)):
        literals = evidence_literals(function, role)
        assert any(_runs(_words(literal)) & quote for literal in literals), role


def test_the_scan_reads_a_lambda_and_leaves_keys_alone() -> None:
    prop = Property(
        lambda params: {},
        lambda w: Premise(True, "the core runs without a terminal here"),
        lambda w: {"the core runs without a terminal": True},
        lambda w: {"the core runs without a terminal": bool(w.traces)},
    )
    quote = _runs(_words(SENTENCE))
    said = evidence_literals(prop.premise, "premise")
    assert any(_runs(_words(literal)) & quote for literal in said)
    assert not any(_runs(_words(literal)) & quote for literal in evidence_literals(prop.observed))
