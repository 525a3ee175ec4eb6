"""The documentation and declarations scopes: their judges on small inputs, and what the committed facts (generated
by `pinb scopes refresh` from each release's tarball) say about the four facts the scopes exist to find."""

from __future__ import annotations

from pathlib import Path

import pytest

from pinb.chapters.book import chapter_text
from pinb.chapters.registry import folders
from pinb.fingerprints import normalise as normalise_text
from pinb.scopes.declarations import Member, Shape, Variant, check_fields
from pinb.scopes.documentation import check_quote, check_sentence, find_mentions, normalise
from pinb.scopes.facts import ReleaseFacts, ScopeResult, load_all, specs_digest

DOC = """# Events

Handlers run in `extension` load and **registration** order.
A run proceeds from input, to [agent_end](#agent-end).
"""


def test_markup_is_not_compared_but_words_are() -> None:
    assert normalise("`pi.on()` returns **one** [link](x.md)") == "pi.on() returns one link"
    assert check_sentence("Handlers run in extension load and registration order.", DOC).status == "verbatim"
    assert check_sentence("a run proceeds from input, to agent_end.", DOC).line == 4
    changed = check_sentence("Handlers run in extension load order, then registration order.", DOC)
    assert (changed.status, changed.line) == ("differs", 3)
    assert '"and" where the chapter has "order, then"' in changed.difference
    assert check_sentence("Tool calls may run concurrently with one another.", DOC).status == "absent"


def test_a_quote_is_checked_sentence_by_sentence() -> None:
    checks = check_quote("Handlers run in extension load and registration order. Nothing else happens here.", DOC)
    assert [c.status for c in checks] == ["verbatim", "absent"]


def test_mentions_name_their_changelog_release() -> None:
    changelog = (
        "# Changelog\n\n## [0.84.0] - x\n\n- RPC only.\n\n## [0.83.0] - y\n\n- Fixed RPC bash\n  reaching user_bash.\n"
    )
    found = find_mentions(("RPC", "user_bash"), changelog)
    assert [(m.section, m.line, m.text) for m in found] == [("0.83.0", 9, "- Fixed RPC bash reaching user_bash.")]


def _shape(*members: tuple[str, bool], variants: tuple[Variant, ...] = (), kind: str = "interface") -> Shape:
    return Shape(
        file="dist/types.d.ts",
        line=1,
        kind=kind,
        discriminant="messageType" if variants else None,
        members=tuple(Member(name=n, optional=o, type="string") for n, o in members),
        variants=variants,
    )


def test_fields_named_by_a_claim_against_a_declared_type() -> None:
    shape = _shape(("type", False), ("content", False), ("images", True))
    assert check_fields("E", ("content", "images?"), shape).status == "matches"
    missing = check_fields("E", ("result",), shape)
    assert (missing.status, missing.missing, missing.declared) == ("differs", ("result",), ("content", "images?"))
    assert check_fields("E", ("images",), shape).optionality == ("images is optional, the chapter writes it required",)
    assert check_fields("Nope", ("x",), None).status == "absent"


def test_a_field_only_some_variants_declare_is_a_difference() -> None:
    user = Variant(name="U", value="user", members=(Member(name="prompt", optional=False, type="string"),))
    custom = Variant(name="C", value="custom", members=())
    check = check_fields("E", ("prompt",), _shape(("type", False), variants=(user, custom), kind="union"))
    assert check.status == "differs"
    assert check.in_variants == ('prompt only in the messageType "user" variant',)
    assert check.shape == 'a union on messageType ("user", "custom")'


# --- the committed facts -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def facts() -> dict[str, ReleaseFacts]:
    return {f.release.version: f for f in load_all()}


def _one(facts: ReleaseFacts, claim: str, scope: str) -> ScopeResult:
    (found,) = [r for r in facts.of(claim) if r.scope == scope]
    return found


def test_facts_cover_every_registry_release_from_1_0_3_with_their_sources(facts: dict[str, ReleaseFacts]) -> None:
    assert list(facts) == ["1.0.3", "1.3.0", "1.4.0", "1.5.0", "1.5.2", "1.6.0"]
    for version, release_facts in facts.items():
        assert release_facts.release.integrity.startswith("sha512-")
        assert release_facts.release.published.startswith("2026-")
        assert release_facts.release.tarball.endswith(f"pi-coding-agent-{version}.tgz")
        assert release_facts.accessed


def test_facts_are_current_with_the_ledgers_and_the_reading_code(facts: dict[str, ReleaseFacts]) -> None:
    digest = specs_digest([f.ledger for f in folders().values()])
    stale = [v for v, f in facts.items() if f.specs_digest != digest]
    assert not stale, f"run `pinb scopes refresh`: the scope facts of {stale} are not current"


def test_the_extensions_md_quotes_are_verbatim_in_1_0_3_and_gone_from_1_6_0(facts: dict[str, ReleaseFacts]) -> None:
    for claim in ("pi-16.dispatch.declared-result-type", "pi-16.run.shape"):
        assert _one(facts["1.0.3"], claim, "documentation").verdict == "holds"
        assert _one(facts["1.6.0"], claim, "documentation").verdict == "absent"
    rules = _one(facts["1.6.0"], "pi-16.dispatch.docs-three-rules", "documentation")
    assert rules.verdict == "differs"
    assert [p.status for p in rules.passages].count("verbatim") == 1


def test_tool_result_has_no_result_field_in_either_release(facts: dict[str, ReleaseFacts]) -> None:
    for version in ("1.0.3", "1.6.0"):
        check = _one(facts[version], "pi-16.events.tool-result", "declarations")
        assert check.verdict == "differs"
        assert check.fields is not None and check.fields.missing == ("result",)
        assert "content" in check.fields.declared


def test_before_agent_start_became_a_union_on_message_type_in_1_2_0(facts: dict[str, ReleaseFacts]) -> None:
    before = _one(facts["1.0.3"], "pi-16.events.before-agent-start", "declarations")
    after = _one(facts["1.3.0"], "pi-16.events.before-agent-start", "declarations")
    assert before.verdict == "holds" and before.fields is not None and before.fields.shape == "interface"
    assert after.fields is not None and after.fields.shape.startswith("a union on messageType")
    assert [c.section for c in after.changes] == ["1.2.0"]
    assert "union on messageType" in after.changes[0].text


def test_rpc_bash_commands_reach_user_bash_since_0_83_0(facts: dict[str, ReleaseFacts]) -> None:
    for release_facts in facts.values():
        found = _one(release_facts, "pi-16.events.user-bash", "documentation")
        assert found.verdict == "holds" and [m.section for m in found.mentions] == ["0.83.0"]
    reason = folders()["pi-16-chapter"].ledger.claim("pi-16.events.user-bash").reason  # type: ignore[union-attr]
    assert "RPC" in reason and "0.83.0" in reason and "terminal UI" not in reason


def test_every_scope_states_the_chapter_s_own_words() -> None:
    if not (Path(__file__).resolve().parents[2].parent / "shared" / "book").is_dir():
        pytest.skip("the book texts (../shared/book) are not next to this checkout")
    for found in folders().values():
        text = chapter_text(found.ledger)
        assert text is not None
        haystack = normalise_text(text.text)
        for claim in found.ledger.claims:
            if claim.scopes is None:
                continue
            for doc in claim.scopes.documentation:
                for quote in doc.quotes:
                    assert normalise_text(quote) in haystack, (claim.id, quote)
            for decl in claim.scopes.declarations:
                for name in decl.fields:
                    assert name in claim.text, (claim.id, name)
