"""The rules are pure Python (docs/architecture.md): no Django, and nothing from the rest of
``gameplay``."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gameplay.rules

RULES_DIR = Path(gameplay.rules.__file__).resolve().parent
REPO_ROOT = RULES_DIR.parent.parent
RULES_PACKAGE = "gameplay.rules"


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO_ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported_modules(source: str, module: str, is_package: bool) -> list[str]:
    """Absolute names of every module ``source`` imports (relative imports resolved)."""
    package = module if is_package else module.rpartition(".")[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts)
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            names.append(target)
            # ``from gameplay import models`` imports gameplay.models.
            names.extend(f"{target}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _forbidden(name: str) -> bool:
    if name == "django" or name.startswith("django."):
        return True
    if name == "gameplay":
        return False  # the parent package itself; its submodules are checked by name
    if name.startswith("gameplay."):
        return not (name == RULES_PACKAGE or name.startswith(RULES_PACKAGE + "."))
    return False


def _violations(source: str, module: str, is_package: bool = False) -> list[str]:
    return sorted({n for n in _imported_modules(source, module, is_package) if _forbidden(n)})


def _rules_files() -> list[Path]:
    return sorted(RULES_DIR.rglob("*.py"))


def test_rules_package_has_modules_to_check():
    names = {p.name for p in _rules_files()}
    assert {"__init__.py", "night.py", "day.py", "deal.py", "winner.py"} <= names


@pytest.mark.parametrize("path", _rules_files(), ids=lambda p: p.name)
def test_rules_module_imports_neither_django_nor_the_rest_of_gameplay(path: Path):
    module = _module_name(path)
    bad = _violations(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")
    assert bad == [], f"{module} imports {bad}"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import django", ["django"]),
        ("from django.db import models", ["django.db", "django.db.models"]),
        ("from gameplay import models", ["gameplay.models"]),
        ("from ..models import Game", ["gameplay.models", "gameplay.models.Game"]),
        ("from .. import services", ["gameplay.services"]),
        ("import gameplay.services.night", ["gameplay.services.night"]),
    ],
)
def test_import_checker_catches_forbidden_imports(source: str, expected: list[str]):
    assert _violations(source, "gameplay.rules.night") == expected


@pytest.mark.parametrize(
    "source",
    [
        "from .roles import Role",
        "from . import roles",
        "from gameplay.rules.state import Table",
        "import hashlib, json",
        "from gameplay import rules",
    ],
)
def test_import_checker_allows_the_rules_own_imports(source: str):
    assert _violations(source, "gameplay.rules.night") == []


_SUBPROCESS = r"""
import importlib, pkgutil, sys

class BlockDjango:
    # Any attempt to import Django fails, as on a machine without it.
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django."):
            raise ImportError("django is blocked in this test")
        return None

sys.meta_path.insert(0, BlockDjango())
import gameplay.rules as rules
for info in pkgutil.walk_packages(rules.__path__, rules.__name__ + "."):
    importlib.import_module(info.name)
loaded = sorted(m for m in sys.modules if m == "django" or m.startswith("django."))
others = sorted(
    m for m in sys.modules
    if m.startswith("gameplay.") and not (m == "gameplay.rules" or m.startswith("gameplay.rules."))
)
print(loaded, others)
sys.exit(1 if loaded or others else 0)
"""


@pytest.mark.slow  # a subprocess: not in `make test-fast`
def test_rules_import_in_a_fresh_interpreter_without_django():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "[] []"
