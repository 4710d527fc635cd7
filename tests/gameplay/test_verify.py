"""``manage.py verify``: anyone can check a finished game's deal from its published seed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from gameplay.rules import RoleCounts, deal


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify", *args, stdout=out)
    except SystemExit as e:
        return int(e.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_published_seed_verifies_and_prints_the_deal() -> None:
    result = deal("итоговое-зерно", RoleCounts())
    code, out = run("итоговое-зерно", result.commitment)
    assert code == 0
    assert "OK" in out
    assert out.count("\n") >= 26
    for seat, role in enumerate(result.roles, start=1):
        assert f"{seat:>3}  {role.value}" in out


def test_tampered_seed_or_counts_do_not_verify() -> None:
    result = deal("зерно", RoleCounts())
    assert run("зерн0", result.commitment)[0] == 1
    assert run("зерно", result.commitment, "--mafia", "5", "--civilian", "18")[0] == 1


def test_small_game_counts() -> None:
    counts = RoleCounts(mafia=2, commissar=1, doctor=1, maniac=1, civilian=2)
    result = deal("seed", counts)
    args = ["--mafia", "2", "--civilian", "2"]
    assert run("seed", result.commitment, *args)[0] == 0


@pytest.mark.parametrize("bad", [["--mafia", "0"], ["--civilian", "-5"]])
def test_impossible_counts_exit_2(bad: list[str]) -> None:
    assert run("seed", "00", *bad)[0] == 2
