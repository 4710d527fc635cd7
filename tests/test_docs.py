"""The project's own docs stay true to the tree: every relative link of README.md, docs/*.md and
the folders' READMEs (bench/, localvk/) names a file or folder that exists (a module that moved,
a scenario renamed, a screenshot dropped all show here) and every anchor a heading of its page,
and no doc — no file at all — sends the reader outside the repository."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "bench" / "README.md",
    ROOT / "localvk" / "README.md",
]
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
    assert {"operations.md", "architecture.md", "panel.md"} <= names
    assert sum(len(relative_links(doc)) for doc in DOCS) > 20


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_relative_link_names_something_that_exists(doc: Path) -> None:
    missing = [t for t in relative_links(doc) if not (doc.parent / t).exists()]
    assert not missing, f"{doc.relative_to(ROOT)} links to missing paths: {missing}"


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(
        c for c in text if c.isalnum() or c in " -_" or unicodedata.category(c).startswith("M")
    )
    return kept.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks), repeats numbered as GitHub does."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_every_anchor_names_a_heading(doc: Path) -> None:
    """``[…](#x)`` and ``[…](page.md#x)``: page (or this one) has a heading whose anchor is x."""
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or "#" not in target:
            continue
        path, anchor = target.split("#", 1)
        page = (doc.parent / path) if path else doc
        if page.suffix == ".md" and page.is_file() and anchor not in anchors(page):
            broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)} links to missing anchors: {broken}"


def test_the_readme_leads_to_every_doc() -> None:
    """The README is the way in: it links every doc, the operators' and the benchmarks' too
    (what it no longer holds itself must be one click away)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = set(LINK.findall(readme))
    docs = [d for d in DOCS if d.name != "README.md" or d.parent != ROOT]
    missing = [str(d.relative_to(ROOT)) for d in docs if str(d.relative_to(ROOT)) not in linked]
    assert not missing, f"README.md does not link {missing}"


def test_the_operators_doc_holds_what_the_code_points_operators_to() -> None:
    """Error pages, the panel and .env.example send operators to these sections by name."""
    operations = anchors(ROOT / "docs" / "operations.md")
    assert {
        "configuration",
        "hosting-many-communities",
        "the-admins-key-vk-id",
        "tokens-at-rest",
        "setting-up-a-vk-community",
        "without-docker",
        "scaling-out",
    } <= operations
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert "VK_USER_REFRESH_TOKEN" in text and "rotate_token_keys" in text


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


@pytest.mark.parametrize("name", ["README.md", "docs/panel.md"])
def test_the_readme_and_the_panel_doc_name_only_paths_that_exist(name: str) -> None:
    """The README's reading path and folder table, the panel doc's modules: each path exists."""
    paths = CODE_PATH.findall((ROOT / name).read_text(encoding="utf-8"))
    assert paths
    missing = sorted({p for p in paths if not (ROOT / p).exists()})
    assert not missing, f"{name} names paths that do not exist: {missing}"
