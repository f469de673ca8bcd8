"""The repository stands alone (docs/architecture.md §9 rule 9): no tracked file points at documents
outside it, every citation of a method doc section (`docs/methods/pbfd.md §4.2`) names a
section that exists, and no file cites an issue-tracker entry ("issue 12", "Issues #3",
"fixes #7"): comments say what the code does and why, or cite the docs. Needs git and a
checkout, not the build."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
METHODS = ROOT / "docs" / "methods"

# Names of documents that are not part of the repository. The PBFD and NMDP notes are ours when they
# are docs/methods/pbfd.md and docs/methods/nmdp.md (a path ending in methods/, or a relative link
# inside docs/methods).
OUTSIDE = re.compile(
    r"drumwright-constraint-solver\.md|inverse-dynamics-contact\.md|shared/(?:spec)|\.\./shared"
    r"|(?<![\w/.-])(?:design|style)\.md"
)
OURS_ONLY = re.compile(r"(?<![\w-])(pbfd|nmdp)\.md")
CITATION = re.compile(r"docs/methods/(\w+)\.md §(\d+(?:\.\d+)?)")
SELF = "tests/python/test_repo_self_contained.py"
# An issue-tracker reference: "issue 12", "Issue 5's", "issues 10-12", "issue-12", "issue #12", or a
# bare "#12" after a tracker verb ("fixes #12", "PR #12"). A word "issue(s)" without a number is text.
ISSUE_REF = re.compile(
    r"\b[Ii]ssues?[ -]?#?\d+\b|\b(?:PR|[Ff]ix(?:es|ed)?|[Cc]loses?|[Rr]esolves?) #\d+\b"
)
# Files allowed to carry issue references (none).
ISSUE_REF_PENDING = set()
ISSUE_REF_PENDING_DIRS = ()


def tracked_text_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"not a git checkout: {e}")
    for name in out.decode().split("\0"):
        if not name or name == SELF:
            continue
        path = ROOT / name
        if not path.is_file() or path.stat().st_size > 2_000_000:
            continue
        try:
            yield name, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary


def section_numbers(doc: Path):
    """'4', '4.2', ... of the numbered headings ('## 4. Contact', '### 4.2 Normal force')."""
    nums = set()
    for line in doc.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#{2,4} (\d+(?:\.\d+)?)\.? ", line)
        if m:
            nums.add(m.group(1))
    return nums


def test_no_file_points_outside_the_repository():
    bad = []
    for name, text in tracked_text_files():
        in_methods = name.startswith("docs/methods/")
        for i, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                bad.append(f"{name}:{i}: {line.strip()[:120]}")
                continue
            for m in OURS_ONLY.finditer(line):
                before = line[: m.start()]
                if not (before.endswith("methods/") or in_methods):
                    bad.append(f"{name}:{i}: {line.strip()[:120]}")
    assert not bad, "references to documents outside the repository:\n" + "\n".join(bad)


def test_method_doc_citations_name_existing_sections():
    sections = {}
    bad = []
    for name, text in tracked_text_files():
        for i, line in enumerate(text.splitlines(), 1):
            for m in CITATION.finditer(line):
                doc = METHODS / f"{m.group(1)}.md"
                if not doc.is_file():
                    bad.append(f"{name}:{i}: no {doc.relative_to(ROOT)}")
                    continue
                nums = sections.setdefault(doc, section_numbers(doc))
                if m.group(2) not in nums:
                    bad.append(f"{name}:{i}: {doc.name} has no §{m.group(2)}")
    assert not bad, "citations of missing method-doc sections:\n" + "\n".join(bad)


def test_no_file_cites_an_issue_tracker():
    bad = []
    for name, text in tracked_text_files():
        if name in ISSUE_REF_PENDING or name.startswith(ISSUE_REF_PENDING_DIRS):
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if ISSUE_REF.search(line):
                bad.append(f"{name}:{i}: {line.strip()[:120]}")
    assert not bad, "issue-tracker references (say what the code does, or cite the docs):\n" + "\n".join(bad)
