"""The project's own docs stay true to the tree: every relative link of README.md and docs/*.md
names a file or folder that exists (a module that moved, a scenario renamed, a screenshot
dropped all show here), and no doc — no file at all — sends the reader outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# [text](target) and ![alt](target); the target ends at whitespace or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(doc: Path) -> list[str]:
    targets = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor on the same page
        targets.append(target.split("#", 1)[0])
    return targets


def test_there_are_docs_to_check() -> None:
    names = {doc.name for doc in DOCS}
    assert {"README.md", "rules.md", "scenario-format.md", "vk.md", "players.md"} <= names
    assert sum(len(relative_links(doc)) for doc in DOCS) > 20


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_names_something_that_exists(doc: Path) -> None:
    missing = [t for t in relative_links(doc) if not (doc.parent / t).exists()]
    assert not missing, f"{doc.relative_to(ROOT)} links to missing paths: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_no_doc_points_outside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert not re.search(r"\.\./shared", text)  # the developers' reference folder
    outside = [
        t for t in relative_links(doc) if not (doc.parent / t).resolve().is_relative_to(ROOT)
    ]
    assert not outside, outside


#: A path in backticks: a file with an extension or a folder ending in "/" (``gameplay/rules/``,
#: ``vkbot/pipeline.py``), not a command or a dotted module name.
CODE_PATH = re.compile(
    r"`([A-Za-z_][\w.-]*/(?:[\w.-]+/)*(?:[\w-]+\.(?:py|md|txt|toml|json|html))?)`"
)


def test_no_file_of_the_repository_refers_to_the_reference_folder() -> None:
    """The developers' reference folder beside the repository is no part of it: no tracked
    file (code, CI, docs) names it."""
    import subprocess

    folder = "/".join(("..", "shared"))
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    naming = []
    for name in filter(None, listed.stdout.decode().split("\0")):
        path = ROOT / name
        if path.is_file() and folder.encode() in path.read_bytes():
            naming.append(name)
    assert not naming, naming


def test_the_architecture_doc_names_only_paths_that_exist() -> None:
    doc = ROOT / "docs" / "architecture.md"
    paths = CODE_PATH.findall(doc.read_text(encoding="utf-8"))
    assert len(paths) > 40
    missing = sorted({p for p in paths if not (ROOT / p).exists()})
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")
