"""The layout's promises (docs/architecture.md), kept by a test: the services' public functions
take keyword arguments only, no function in gameplay/ runs past 60 lines, no module of the
project past ~400, and every module of the services, the selectors and the outbox has a test
module of its own (the import directions are `make lint`'s, lint-imports); and the modules
``make test`` runs in one worker because they wait on clocks exist."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["gameplay", "outbox", "vkbot", "panel", "localvk", "config", "demo", "bench", "ops"]
#: "About 400": a module may run a little past it before it is split.
MODULE_LINES = 420
FUNCTION_LINES = 60


def modules(*packages: str) -> list[Path]:
    return sorted(
        p for pkg in packages for p in (ROOT / pkg).rglob("*.py") if "migrations" not in p.parts
    )


#: ``log_event(game, kind, /, **data)``: the facts of an event are keyword arguments of any name
#: (a ``kind`` or ``game`` among them too), so the two fixed ones are positional-only.
POSITIONAL_ONLY = {"gameplay/services/common.py:log_event"}


def test_the_services_public_functions_take_keyword_arguments_only() -> None:
    positional = []
    for path in modules("gameplay/services"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                if node.args.args or node.args.posonlyargs:
                    positional.append(f"{path.relative_to(ROOT)}:{node.name}")
    assert set(positional) == POSITIONAL_ONLY, positional


def test_no_function_in_gameplay_runs_past_sixty_lines() -> None:
    long = []
    for path in modules("gameplay"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None  # ast.parse sets it
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.name} ({lines})")
    assert not long, long


def test_no_module_runs_far_past_four_hundred_lines() -> None:
    big = []
    for path in modules(*PACKAGES):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LINES:
            big.append(f"{path.relative_to(ROOT)} ({lines})")
    assert not big, big


#: The packages whose tests mirror them module by module: each ``<package>/<name>.py`` (but
#: ``__init__.py``) has ``<tests>/test_<name>.py``.
MIRRORED = {
    "gameplay/services": "tests/gameplay/services",
    "gameplay/selectors": "tests/gameplay/selectors",
    "outbox": "tests/outbox",
}


def has_a_test(path: Path) -> bool:
    """Whether the module at ``path`` defines at least one test function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_")
        for node in ast.walk(tree)
    )


def test_every_service_selector_and_outbox_module_has_its_own_test_module() -> None:
    missing = []
    for package, tests in MIRRORED.items():
        sources = sorted((ROOT / package).glob("*.py"))
        assert sources, package
        for source in sources:
            if source.name == "__init__.py":
                continue
            mirror = ROOT / tests / f"test_{source.name}"
            if not (mirror.is_file() and has_a_test(mirror)):
                missing.append(
                    f"{source.relative_to(ROOT)}: no tests in {mirror.relative_to(ROOT)}"
                )
    assert not missing, missing


def test_the_modules_make_test_groups_as_waiting_exist() -> None:
    """tests/conftest.py names the modules that wait on clocks, for ``make test`` to run them in
    one worker: a renamed module would silently drop out of the group."""
    from tests.conftest import WAITING_MODULES

    missing = [name for name in WAITING_MODULES if not (ROOT / name).is_file()]
    assert missing == []
