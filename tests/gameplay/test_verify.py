"""``manage.py verify``: anyone can check a finished game's deal from its published seeds: the
chain of rounds (each commitment against its seed, the deal from the last seed and the roster)
and, for games dealt before rounds, the v1 deal from one seed."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from gameplay.rules import RoleCounts, deal, deal_for_roster, round_commitment


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


# --- the chain of rounds -----------------------------------------------------------------------

ROSTER = [1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009]
COUNTS_9 = ["--mafia", "2", "--civilian", "4"]


def chain_args(seeds: list[str]) -> list[str]:
    args: list[str] = []
    for n, seed in enumerate(seeds, start=1):
        args += ["--round", f"{n}:{round_commitment(n, seed)}:{seed}"]
    return [*args, "--roster", ",".join(str(v) for v in ROSTER), *COUNTS_9]


def test_a_chain_verifies_and_prints_the_deal_by_seat_and_vk_id() -> None:
    result = deal_for_roster("второе", RoleCounts.default_for(9), ROSTER)
    code, out = run(*chain_args(["первое", "второе"]), "--deal", result.commitment)
    assert code == 0, out
    assert "round 1: OK" in out and "round 2: OK" in out
    for seat, role in enumerate(result.roles, start=1):
        assert f"{seat:>3}  {ROSTER[seat - 1]}  {role.value}" in out
    assert "OK: the deal matches the published commitment." in out
    # Without the hash it still checks the chain and says which hash the deal has.
    code, out = run(*chain_args(["первое", "второе"]))
    assert code == 0 and result.commitment in out


def test_a_deal_from_another_round_does_not_match() -> None:
    result = deal_for_roster("второе", RoleCounts.default_for(9), ROSTER)
    assert run(*chain_args(["первое"]), "--deal", result.commitment)[0] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--round", "1:abc:seed", "--roster", "1,2"], "round 1 is forged"),
        (["--round", "2:" + round_commitment(2, "s") + ":s", "--roster", "1,2"], "numbered"),
        (["--round", "один:abc:seed", "--roster", "1,2"], "--round takes NUMBER:COMMITMENT:SEED"),
        (["--round", "1:abc", "--roster", "1,2"], "--round takes NUMBER:COMMITMENT:SEED"),
        (["--round", "1:" + round_commitment(1, "s") + ":s", "--roster", "1,x"], "--roster"),
        (["--round", "1:" + round_commitment(1, "s") + ":s", "--roster", "2,1"], "ascending"),
        (["--round", "1:" + round_commitment(1, "s") + ":s", "--roster", "1,2"], "impossible"),
        (["--roster", "1,2"], "a chain needs every --round and the --roster"),
        (["seed", "hash", "--roster", "1,2"], "not both"),
        ([], "give SEED COMMITMENT"),
    ],
)
def test_a_broken_chain_or_bad_arguments_get_one_english_line_and_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(*args)[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("verify: ") and message in err
