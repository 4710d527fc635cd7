"""The rule scenarios of tests/scenarios through ``manage.py replay`` (docs/scenario-format.md).

Every scenario is replayed in-process on the configured database (PostgreSQL in CI), and all of
them again in a subprocess on a fresh SQLite file, so both backends are checked in one run.
``SCENARIOS_DIR`` points the tests at another folder of scenarios; the folder must hold at least
one scenario with its ``.expected.json``, or collection fails: these tests never skip.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from gameplay.models import Game, Outbox
from tests import forkserver
from tests.settings_support import run_manage_named

ROOT = Path(__file__).resolve().parents[2]
#: The repository's scenarios (docs/scenario-format.md); SCENARIOS_DIR replaces them.
REPO_SCENARIOS = ROOT / "tests" / "scenarios"
SCENARIOS = Path(os.environ.get("SCENARIOS_DIR") or REPO_SCENARIOS)


def scenario_files(folder: Path = SCENARIOS) -> list[Path]:
    """The scenarios of ``folder``, sorted; a missing or empty folder, or a scenario without
    its expected output, is an error (a scenario test that finds nothing must fail, not pass)."""
    if not folder.is_dir():
        raise RuntimeError(f"scenario folder {folder} is missing")
    files = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".expected.json"))
    if not files:
        raise RuntimeError(f"no scenarios in {folder}")
    lacking = [p.name for p in files if not p.with_name(p.stem + ".expected.json").is_file()]
    if lacking:
        raise RuntimeError(f"scenarios without .expected.json in {folder}: {', '.join(lacking)}")
    return files


def expected_for(path: Path) -> dict:
    return json.loads(path.with_name(path.stem + ".expected.json").read_text(encoding="utf-8"))


FILES = scenario_files()


def test_a_missing_or_empty_scenario_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="missing"):
        scenario_files(tmp_path / "nowhere")
    with pytest.raises(RuntimeError, match="no scenarios"):
        scenario_files(tmp_path)
    (tmp_path / "a.json").write_text("{}", encoding="utf-8")
    with pytest.raises(RuntimeError, match="without .expected.json"):
        scenario_files(tmp_path)
    (tmp_path / "a.expected.json").write_text("{}", encoding="utf-8")
    assert scenario_files(tmp_path) == [tmp_path / "a.json"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_matches_expected_on_configured_database(path: Path) -> None:
    out = io.StringIO()
    call_command("replay", str(path), stdout=out)
    assert json.loads(out.getvalue()) == expected_for(path)
    # A replay leaves nothing behind: no game, nothing to send.
    assert not Game.objects.exists()
    assert not Outbox.objects.exists()


@pytest.mark.django_db
def test_replay_keep_leaves_the_finished_game(tmp_path: Path) -> None:
    path = REPO_SCENARIOS / "small_game_town_wins.json"
    call_command("replay", str(path), "--keep", stdout=io.StringIO())
    game = Game.objects.get()
    assert game.winner == "town"
    assert game.events.filter(kind="game_finished").exists()


def _run(
    args: list[str], env: dict[str, str], stdin: bytes | None = None
) -> subprocess.CompletedProcess:
    return forkserver.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The ``manage.py`` processes of the tests below, each as a fresh process runs it, one after
    the other from one started Python (tests/settings_probe.py): on a migrated SQLite file, on
    fresh ones, and on a fresh clone's configuration (``"<name>/path"``: the file of a run)."""
    folder = tmp_path_factory.mktemp("replay")
    migrated = {**os.environ, "DATABASE_URL": f"sqlite:///{folder / 'replay.sqlite3'}"}
    migrated.pop("REDIS_URL", None)
    fresh = {**migrated, "DATABASE_URL": f"sqlite:///{folder / 'new.sqlite3'}"}
    # A fresh clone: no DEBUG, no SECRET_KEY, no ALLOWED_HOSTS (the tests' own DEBUG=true is
    # dropped too). Commands that serve nothing run; anything else still asks for a SECRET_KEY.
    clone = {k: v for k, v in os.environ.items()
             if k not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "REDIS_URL"}}  # fmt: skip
    clone["DATABASE_URL"] = f"sqlite:///{folder / 'fresh.sqlite3'}"
    not_utf8 = folder / "not_utf8.json"
    not_utf8.write_bytes(MALFORMED["not_utf8"])
    planned = {
        "migrate": (["migrate", "--noinput", "-v0"], migrated),
        "all": (["replay", *map(str, FILES)], migrated),
        "among good ones": (["replay", str(FILES[0]), str(not_utf8)], migrated),
        "missing": (["replay", "/nonexistent/scenario.json"], migrated),
        "fresh": (["replay", str(FILES[0])], fresh),
        "fresh again": (["replay", str(FILES[0])], fresh),  # migrated now: nothing more to say
        "clone": (["replay", str(FILES[0])], clone),
        "clone check": (["check"], clone),
    }
    done: dict[str, Any] = dict(run_manage_named(planned))
    assert done["migrate"].returncode == 0, done["migrate"].stderr
    done["among good ones/path"] = not_utf8
    return done


@pytest.mark.slow
def test_every_scenario_matches_on_fresh_sqlite(runs: dict[str, Any]) -> None:
    """All of them in one process (one line of JSON each, in order)."""
    done = runs["all"]
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(FILES)
    for path, line in zip(FILES, lines, strict=True):
        assert json.loads(line) == expected_for(path), path.name


MALFORMED = {
    "not_json": b"{players: []",
    "empty": b"",
    "not_utf8": b"\xff\xfe\x00{",
    "array": b"[]",
    "unknown_role": b'{"players":[{"seat":1,"role":"wizard"}],"phases":[]}',
    "seat_not_int": b'{"players":[{"seat":"1","role":"mafia"}],"phases":[]}',
    "duplicate_seat": b'{"players":[{"seat":1,"role":"mafia"},{"seat":1,"role":"civilian"}],'
    b'"phases":[]}',
    "night_first": b'{"players":[{"seat":1,"role":"mafia"}],"phases":[{"phase":"night"}]}',
    "strike_without_guess": b'{"players":[{"seat":1,"role":"mafia"}],"phases":[{"phase":"day"},'
    b'{"phase":"night","actions":[{"actor":1,"act":"role_strike","target":2}]}]}',
    "unknown_key": b'{"players":[{"seat":1,"role":"mafia"}],"phases":[{"phase":"day",'
    b'"votes":[{"voter":1,"targt":2}]}]}',
    "bad_gm_action": b'{"players":[{"seat":1,"role":"mafia"}],"phases":[{"phase":"gm",'
    b'"action":"resurrect","seat":1}]}',
    "bad_early_close": b'{"settings":{"early_close":"some"},"players":[{"seat":1,"role":"mafia"}],'
    b'"phases":[]}',
    "unplayable_setup": b'{"players":[{"seat":1,"role":"mafia"},{"seat":2,"role":"civilian"}],'
    b'"phases":[]}',
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_scenario_one_line_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process: the command's own handling (the process around it is checked below)."""
    path = tmp_path / f"{case}.json"
    path.write_bytes(MALFORMED[case])
    with pytest.raises(SystemExit) as exited:
        call_command("replay", str(path))
    assert exited.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"replay: {path}: " in lines[0].replace("cannot read ", ""), lines
    assert "Traceback" not in lines[0]


@pytest.mark.slow
def test_a_malformed_scenario_among_good_ones_is_one_line_and_exit_2(runs: dict[str, Any]) -> None:
    done, path = runs["among good ones"], runs["among good ones/path"]
    assert done.returncode == 2
    assert json.loads(done.stdout.splitlines()[0]) == expected_for(FILES[0])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"replay: cannot read {path}"), lines


def test_standard_input_is_read_once(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        call_command("replay", "-", "-")
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == ("replay: standard input ('-') can be read only once")


@pytest.mark.slow
def test_missing_file_one_line_exit_2(runs: dict[str, Any]) -> None:
    done = runs["missing"]
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_replay_on_a_fresh_sqlite_file_migrates_it_first(runs: dict[str, Any]) -> None:
    done, again = runs["fresh"], runs["fresh again"]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected_for(FILES[0])
    [note] = done.stderr.strip().splitlines()
    assert note.startswith("replay: applying ") and "new.sqlite3 first" in note
    assert again.returncode == 0 and again.stderr == ""


@pytest.mark.slow
@pytest.mark.postgres(reason="a server database that is not migrated (SQLite's file is migrated)")
def test_replay_refuses_a_server_database_that_is_not_migrated(tmp_path: Path) -> None:
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    name = f"vkmafia_unmigrated_{os.getpid()}"
    admin = psycopg.connect(host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432,
                            user=db["USER"], password=db["PASSWORD"] or None,
                            dbname="postgres", autocommit=True)  # fmt: skip
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
            url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{name}"
            env = {**os.environ, "DATABASE_URL": url}
            done = _run(["replay", str(FILES[0])], env)
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    assert done.returncode == 2 and done.stdout == b""
    [line] = done.stderr.decode().strip().splitlines()
    assert line.startswith("replay: the database lacks ") and "manage.py migrate" in line


@pytest.mark.slow
def test_replay_needs_no_configuration_though_debug_is_off_by_default(runs: dict[str, Any]) -> None:
    # A fresh clone's configuration (see ``runs``): replay serves nothing and runs; check does not.
    done, refused = runs["clone"], runs["clone check"]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == expected_for(FILES[0])
    assert refused.returncode == 2
    assert refused.stderr.strip() == (
        "Configuration error: SECRET_KEY must be set when DEBUG is false."
    )
