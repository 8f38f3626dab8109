"""The project's files describe the project as it is: no work periods or issue numbers (history lives in git log and
CHANGELOG.md), and the scale document stays a document, not a log."""

import re
import subprocess

import pytest

from tests.conftest import ROOT

HISTORY = re.compile(r"\bsessions? #?\d+|\bissues? #?\d+", re.IGNORECASE)
#: a commit hash: 7 to 40 hex digits with at least one letter and one digit
COMMIT = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
#: a comparison with one of the ledger's own versions ("0.11.0 held the whole file")
VERSION_DATED = re.compile(r"\b0\.\d+\.\d+\b")
TEXT = ("*.py", "*.sql", "*.md", "*.toml", "*.j2", "*.sh", "*.lock")


def tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "--", *TEXT], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return out.stdout.split()


def test_no_file_names_a_work_period_or_an_issue_number():
    found = [
        f"{name}:{number}: {line.strip()[:100]}"
        for name in tracked()
        for number, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), start=1)
        if HISTORY.search(line)
    ]
    assert not found, "\n".join(found[:20])


def test_the_pattern_finds_what_it_is_meant_to():
    # the check above can fail: each of these lines would fail it, and ordinary prose would not
    # (the numbers are joined on at run time, so that this file does not name one itself)
    numbered = ("measured in session " + "17", "see issue #" + "14", "Issue " + "36 moved it", "sessions " + "9 to 12")
    for line in numbered:
        assert HISTORY.search(line), line
    for line in ("a session of `costledger sql`", "the issue date of an invoice", "17 sessions of review"):
        assert not HISTORY.search(line), line


def test_scale_document_is_at_most_10000_characters():
    assert len((ROOT / "docs" / "scale.md").read_text(encoding="utf-8")) <= 10_000


def test_readme_is_at_most_12000_characters_and_links_to_what_exists():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme) <= 12_000
    for doc in ["README.md", *(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]:
        text = (ROOT / doc).read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" not in target:
                assert ((ROOT / doc).parent / target).exists(), f"{doc} links to {target}, which does not exist"


def present_docs() -> list[str]:
    """The documents that describe the ledger as it is: the README and docs/, without the history (the changelog and
    the migration notes, by version)."""
    return ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")) if p.name != "migration.md")]


def test_the_present_docs_name_no_commit_and_no_version_of_the_ledger():
    found = [
        f"{doc}:{number}: {line.strip()[:100]}"
        for doc in present_docs()
        for number, line in enumerate((ROOT / doc).read_text(encoding="utf-8").splitlines(), start=1)
        if COMMIT.search(line) or VERSION_DATED.search(line)
    ]
    assert not found, "\n".join(found[:20])


def test_the_history_patterns_find_what_they_are_meant_to():
    for line in ("main at 48a12ac", "commit 04ef20a took 21.0 s", "0.11.0 held the whole file"):
        assert COMMIT.search(line) or VERSION_DATED.search(line), line
    for line in ("5,000,000 requests", "a 1234567 byte file", "FOCUS 1.2", "sha256 of deadbeef", "Spark 3.5"):
        assert not (COMMIT.search(line) or VERSION_DATED.search(line)), line
