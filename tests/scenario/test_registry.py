"""The registry reader: one `npm view` per package and process, kept on disk for a day with the time it was read,
npm ranges matched by a library (offline: npm is a fake)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pinb.errors import ReferenceError_
from pinb.scenario import reference, registry

CHORD = [
    {"version": "0.87.1", "dependencies": {"esbuild": "0.28.2"}},
    {"version": "1.5.0", "dependencies": {"@earendil-works/pi-schema": "1.5.0"}},
    {"version": "1.6.1"},
    {"version": "2.0.0-rc.1"},
]


@pytest.fixture
def npm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[list[str]]]:
    """A fake npm answering CHORD for every package; the commands it was given."""
    calls: list[list[str]] = []
    monkeypatch.setenv("PINB_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(registry.MAX_AGE_ENV, raising=False)
    monkeypatch.setattr(reference, "_npm", lambda: "npm")

    def fake_run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        if "missing" in command[2]:
            return subprocess.CompletedProcess(command, 1, "", "npm error code E404\nnpm error 404 Not Found\n")
        return subprocess.CompletedProcess(command, 0, json.dumps(CHORD), "")

    monkeypatch.setattr(registry.subprocess, "run", fake_run)
    registry.forget()
    yield calls
    registry.forget()


def test_one_npm_view_reads_every_version_and_its_dependencies(npm: list[list[str]]) -> None:
    found = registry.document("@earendil-works/chord")
    assert npm == [["npm", "view", "@earendil-works/chord@>=0.0.0-0", "version", "dependencies", "--json"]]
    assert list(found.versions) == ["0.87.1", "1.5.0", "1.6.1", "2.0.0-rc.1"]
    assert found.dependencies("1.6.1") == {} and found.dependencies("1.0.4") is None
    assert found.exists and found.read_at.endswith("Z")
    registry.document("@earendil-works/chord")
    assert len(npm) == 1  # the process keeps it


@pytest.mark.parametrize(
    ("spec", "accepted"),
    [
        ("^1.0.3", ["1.5.0", "1.6.1"]),
        ("1.6.1", ["1.6.1"]),
        ("~1.5.0", ["1.5.0"]),
        (">=0.87.0 <1.0.0", ["0.87.1"]),
        ("^1.7.0", []),
        ("*", ["0.87.1", "1.5.0", "1.6.1"]),  # a prerelease only where the range names one (npm's rule)
        (">=2.0.0-rc.0", ["2.0.0-rc.1"]),
    ],
)
def test_npm_ranges_are_matched_with_npm_semantics(npm: list[list[str]], spec: str, accepted: list[str]) -> None:
    assert registry.document("@earendil-works/chord").satisfying(spec) == accepted


def test_a_range_npm_would_not_accept_is_one_clear_error(npm: list[list[str]]) -> None:
    with pytest.raises(ReferenceError_, match=r"'not a range' is not an npm version range"):
        registry.document("@earendil-works/chord").satisfying("not a range")


def test_a_package_the_registry_lacks_is_no_error(npm: list[list[str]]) -> None:
    found = registry.document("@earendil-works/missing")
    assert not found.exists and found.versions == {}


def test_one_matching_version_is_answered_as_an_object(npm: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry.subprocess,
        "run",
        lambda command, **kw: subprocess.CompletedProcess(command, 0, '{"version":"1.0.0"}', ""),
    )
    assert list(registry.document("solo").versions) == ["1.0.0"]


def test_the_disk_cache_answers_the_next_process_with_its_own_read_time(npm: list[list[str]]) -> None:
    first = registry.document("@earendil-works/chord")
    registry.forget()  # a new process
    again = registry.document("@earendil-works/chord")
    assert len(npm) == 1
    assert again == first  # the time cited is when the registry was read, not when the cache was used


def _age_cache(package: str, by: timedelta) -> None:
    path = Path(registry._path(package))
    data = json.loads(path.read_text(encoding="utf-8"))
    when = datetime.strptime(data["read_at"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - by
    data["read_at"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_cache_older_than_a_day_is_read_again(npm: list[list[str]]) -> None:
    registry.document("@earendil-works/chord")
    _age_cache("@earendil-works/chord", timedelta(hours=25))
    registry.forget()
    registry.document("@earendil-works/chord")
    assert len(npm) == 2


def test_the_maximum_age_is_set_by_environment(npm: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    registry.document("@earendil-works/chord")
    _age_cache("@earendil-works/chord", timedelta(hours=25))
    monkeypatch.setenv(registry.MAX_AGE_ENV, str(48 * 3600))
    registry.forget()
    registry.document("@earendil-works/chord")
    assert len(npm) == 1
    monkeypatch.setenv(registry.MAX_AGE_ENV, "0")  # every process reads the registry
    registry.forget()
    registry.document("@earendil-works/chord")
    assert len(npm) == 2


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_maximum_age_is_one_clear_error(
    npm: list[list[str]], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(registry.MAX_AGE_ENV, value)
    with pytest.raises(ReferenceError_, match=rf"^PINB_REGISTRY_MAX_AGE='{value}' is not a number of seconds"):
        registry.document("@earendil-works/chord")


def test_an_unreadable_or_foreign_cache_file_is_read_again(npm: list[list[str]]) -> None:
    registry.document("@earendil-works/chord")
    Path(registry._path("@earendil-works/chord")).write_text("{not json", encoding="utf-8")
    registry.forget()
    assert "0.87.1" in registry.document("@earendil-works/chord").versions
    assert len(npm) == 2


def test_an_unwritable_cache_folder_still_answers(npm: list[list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PINB_CACHE_DIR", "/proc/pinb-no-such-folder")
    assert registry.document("@earendil-works/chord").exists
