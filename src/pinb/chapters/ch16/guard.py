"""Chapter 16's review guard: its patterns and code as the chapter prints them, and a corpus of commands that
force-push or destroy work.

pinb keeps no copy of the book's code. The patterns are the regex literals of the `BLOCKED` array the ledger
quotes (claim `pi-16.guard.patterns`; the quote is checked against the chapter text whenever it is available),
and `extension_source()` cuts the whole extension out of the chapter text at run time. Each corpus case carries
the verdict real JavaScript gives for the book's guard (Node 22 running the handler body on the case's input), as
which of the book's patterns matched, by position; so a notebook can show a useful guard that is not an
unconditional prohibition. The scenario builders here put the book's guard into a scenario as a `block_if_match`
action.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from pinb.chapters.book import book_dir, chapter_text
from pinb.chapters.ledger import LEDGER_FILE, load_ledger
from pinb.errors import UsageError

#: The claim whose quote is the `BLOCKED` array.
PATTERNS_CLAIM = "pi-16.guard.patterns"
#: Where the extension starts in the chapter text, and the function whose closing brace ends it.
EXTENSION_START = 'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";'
EXTENSION_BODY = "export default function"


#: What was read from the ledger and the chapter text, by the files' stamps: a generated witness builds the guard
#: extension, and reading and parsing both files again for every one of them cost more than running it.
_READ: dict[tuple[Any, ...], Any] = {}


def _stamp(path: Path) -> tuple[str, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return str(path), found.st_mtime_ns, found.st_size


def _cached(key: tuple[Any, ...], read: Any) -> Any:
    if key not in _READ:
        if len(_READ) > 64:  # files edited while a long session runs: keep only what is current
            _READ.clear()
        _READ[key] = read()
    return _READ[key]


def _ledger() -> Any:
    path = Path(__file__).with_name(LEDGER_FILE)
    return _cached(("ledger", _stamp(path)), lambda: load_ledger(path))


def regex_literals(code: str) -> list[tuple[str, str]]:
    """The JavaScript regex literals (`/source/flags`) written in an array literal of `code`, in order."""
    found: list[tuple[str, str]] = []
    i, n = 0, len(code)
    while i < n:
        if code[i] == "/" and code[:i].rstrip()[-1:] in ("[", ","):
            j, in_class = i + 1, False
            while j < n and (code[j] != "/" or in_class):
                if code[j] == "\\":
                    j += 1
                elif code[j] == "[":
                    in_class = True
                elif code[j] == "]":
                    in_class = False
                j += 1
            k = j + 1
            while k < n and code[k].isalpha():
                k += 1
            found.append((code[i + 1 : j], code[j + 1 : k]))
            i = k
        else:
            i += 1
    return found


def book_patterns() -> list[tuple[str, str]]:
    """The guard's regexes as the chapter prints them, `(source, flags)`: the `BLOCKED` array the ledger quotes."""
    claim = _ledger().claim(PATTERNS_CLAIM)
    if claim is None:
        raise UsageError(f"chapter 16's ledger has no claim {PATTERNS_CLAIM} quoting the guard's BLOCKED array")
    return list(_cached(("patterns", claim.quotes), lambda: tuple(regex_literals(" ".join(claim.quotes)))))


def pattern_sources() -> list[str]:
    """The sources of the book's regexes (what the handler's `hit.source` prints)."""
    return [source for source, _flags in book_patterns()]


def book_decision(command: str) -> str | None:
    """The source of the first of the book's regexes that matches `JSON.stringify({command})`, or None."""
    from pinb.app.js_compat import js_regex, json_stringify

    subject = json_stringify({"command": command}) or ""
    return next((source for source, flags in book_patterns() if js_regex(source, flags).search(subject)), None)


def extension_source() -> str | None:
    """The review-guard extension as the chapter prints it (TypeScript), or None when the text is not available.

    From its `import type { ExtensionAPI }` line to the brace that closes `export default function`, verbatim. The
    excerpt this chapter is read from (its research brief) runs the code onto one line, so the handler's `//`
    comment would hide the rest of the line from a JavaScript parser: whoever runs it must first end that comment.
    """
    ledger = _ledger()
    folder = book_dir()
    files = (ledger.text, *ledger.also_quoted_from)
    stamps = tuple(_stamp(folder / source.file) for source in files) if folder is not None else None
    ledger_stamp = _stamp(Path(__file__).with_name(LEDGER_FILE))
    return _cached(("extension", ledger_stamp, folder, stamps), lambda: _cut_extension(ledger))


def _cut_extension(ledger: Any) -> str | None:
    text = chapter_text(ledger)
    if text is None:
        return None
    start = text.text.find(EXTENSION_START)
    body = text.text.find(EXTENSION_BODY, start)
    if start < 0 or body < 0:
        raise UsageError(f"chapter 16's text has no review-guard extension starting with {EXTENSION_START!r}")
    depth, i = 0, text.text.index("{", text.text.index(")", body))
    while i < len(text.text):
        depth += {"{": 1, "}": -1}.get(text.text[i], 0)
        if depth == 0:
            return text.text[start : i + 1]
        i += 1
    raise UsageError("chapter 16's review-guard extension has no closing brace in the text")


class EvasionCase(BaseModel):
    """One command and the verdict the book's guard gives it in real JavaScript (checked with Node)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str
    """The bash command (or file content, for a non-shell tool)."""
    destroys: str
    """What running it loses or rewrites; "nothing" marks a false positive."""
    js_blocked: bool
    """What the book's handler decides in JavaScript (Node 22, JSON.stringify + RegExp.test)."""
    js_match: int | None = None
    """Which of the book's patterns matched in JavaScript, by position in `BLOCKED` (0, 1, 2), if any."""
    tool_name: str = "bash"
    """The tool the call goes through; the guard inspects only bash and powershell."""
    note: str = ""
    """Why the verdict comes out as it does."""

    @property
    def js_pattern(self) -> str | None:
        """Source of the pattern that matched in JavaScript, if any (read from the book's `BLOCKED` array)."""
        return None if self.js_match is None else pattern_sources()[self.js_match]

    @property
    def input(self) -> dict[str, Any]:
        """The tool input the handler sees."""
        if self.tool_name == "write":
            return {"path": "cleanup.sh", "content": self.command}
        return {"command": self.command}


#: The book's patterns by position in `BLOCKED`: the push, reset and clean guards.
_PUSH, _RESET, _CLEAN = 0, 1, 2


def _case(command: str, destroys: str, pattern: int | None, note: str = "", tool_name: str = "bash") -> EvasionCase:
    return EvasionCase(
        command=command,
        destroys=destroys,
        js_blocked=pattern is not None,
        js_match=pattern,
        tool_name=tool_name,
        note=note,
    )


_REMOTE = "rewrites the remote branch's history"
_LOCAL = "uncommitted changes in the working tree"
_UNTRACKED = "untracked (and ignored) files"

# Verdicts recorded from Node 22 running the book's handler body on {command} (see tests/chapters/test_guard_corpus.py).
EVASION_CORPUS: Final[tuple[EvasionCase, ...]] = (
    _case("git push --force", _REMOTE, _PUSH, "the book's own example"),
    _case("git push -f origin main", _REMOTE, _PUSH),
    _case("git push origin main --force", _REMOTE, _PUSH, "[^\\n]* lets the flag come after the refspec"),
    _case("git push --force-with-lease", _REMOTE, _PUSH, "listed in the pattern"),
    _case("git push --force-if-includes --force-with-lease", _REMOTE, _PUSH),
    _case("git  push --force", _REMOTE, _PUSH, "\\s+ absorbs the second space"),
    _case("git push origin +main", _REMOTE, None, "a leading + on the refspec forces that ref; no flag to match"),
    _case("git push --forc origin main", _REMOTE, None, "git accepts unambiguous abbreviations of long options"),
    _case("git push -uf origin main", _REMOTE, None, "bundled short flags: no '-f' after a non-word character"),
    _case("git -c x=y push -f", _REMOTE, None, "an option between git and push breaks git\\s+push"),
    _case("GIT PUSH --FORCE", _REMOTE, None, "the regexes have no i flag (GIT runs git on case-insensitive systems)"),
    _case("git\tpush --force", _REMOTE, None, "JSON.stringify turns the tab into the two characters \\t"),
    _case("cd repo\ngit push --force", _REMOTE, None, "the newline becomes \\n, so 'ngit' has no word boundary"),
    _case("g=git; $g push --force", _REMOTE, None, "the command name comes from a variable"),
    _case("echo Z2l0IHB1c2ggLS1mb3JjZQ== | base64 -d | sh", _REMOTE, None, "the command is encoded"),
    _case('sh -c "git push --force"', _REMOTE, _PUSH, "escaped quotes do not hide the text"),
    _case("git push --mirror", "overwrites and deletes every remote ref to mirror the local ones", None),
    _case("git push -d origin main", "deletes the remote branch", None),
    _case("git push origin :main", "deletes the remote branch", None),
    _case("git push origin --delete main", "deletes the remote branch", None),
    _case("git rebase -i HEAD~5 && git push --force-with-lease", _REMOTE, _PUSH, "the push half is caught"),
    _case("git commit --amend --no-edit && git push origin HEAD:main -f", _REMOTE, _PUSH),
    _case("git filter-branch --tree-filter 'rm -f secrets' HEAD", "rewrites every commit on the branch", None),
    _case("git reset --hard", _LOCAL, _RESET),
    _case("git reset --hard HEAD~3", "the last three commits and " + _LOCAL, _RESET),
    _case("git reset\t--hard", _LOCAL, None, "tab becomes \\t in JSON"),
    _case("git reset --har", _LOCAL, None, "abbreviated long option"),
    _case("git checkout -- .", _LOCAL, None),
    _case("git restore .", _LOCAL, None),
    _case("git stash clear", "every stash entry", None),
    _case("git branch -D feature", "the local branch and commits only it holds", None),
    _case("git clean -fdx", _UNTRACKED, _CLEAN),
    _case("git clean -xdf", _UNTRACKED, _CLEAN, "-[a-z]*f allows letters before the f"),
    _case("git clean -d -x -f", _UNTRACKED, _CLEAN),
    _case("git clean --force -d", _UNTRACKED, _CLEAN, "the '-f' inside '--force' matches"),
    _case("rm -rf .git", "the whole repository history", None),
    _case("git reflog expire --expire=now --all && git gc --prune=now", "unreachable commits, for good", None),
    _case(
        "git push origin main; rm -f build.log", "nothing on the remote", _PUSH, "false positive: [^\\n]* crosses ';'"
    ),
    _case('echo "never run git push --force"', "nothing", _PUSH, "false positive: the text is only printed"),
    _case("git push origin main", "nothing (a plain push)", None),
    _case("git push --force", _REMOTE, None, "written into a script by another tool", tool_name="write"),
)


def guard_action(confirm_with_ui: bool = True, tool_names: tuple[str, ...] = ("bash", "powershell")) -> dict[str, Any]:
    """The book's guard, as a `block_if_match` action."""
    return {
        "kind": "block_if_match",
        "tool_names": list(tool_names),
        "patterns": pattern_sources(),
        "match_on": "json_input",
        "reason_template": "Guard blocked: {pattern}",
        "confirm_with_ui": confirm_with_ui,
    }


def runnable_source(source: str) -> str:
    """The extension's code with each `//` comment closed where the next statement starts.

    The excerpt the chapter is read from runs the code onto one line, so a `//` comment would swallow the rest of
    it; the comment becomes a `/* … */` block ending before the next `return`, `const`, `if` or `await`. Nothing
    else changes.
    """
    return re.sub(r"//([^\n]*?)(?=\s(?:return|const|let|if|await)\b)", r"/*\1 */", source)


def guard_extension() -> dict[str, Any]:
    """The book's guard: its code cut from the chapter text (run by the pi backend) and the stand-in's port."""
    extension: dict[str, Any] = {
        "name": "review-guard",
        "handlers": [{"event": "tool_call", "label": "guard", "action": guard_action()}],
    }
    source = extension_source()
    if source is not None:
        extension["source"] = runnable_source(source)
    return extension
