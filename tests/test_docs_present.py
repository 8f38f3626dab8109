"""The project's files describe the project as it is: no work periods or issue numbers (history lives in git log and
CHANGELOG.md), and the scale document stays a document, not a log."""

import re
import subprocess

import pytest

from tests.conftest import ROOT

HISTORY = re.compile(r"\bsessions? #?\d+|\bissues? #?\d+", re.IGNORECASE)
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
