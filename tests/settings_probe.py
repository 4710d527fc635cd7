"""Run many ``manage.py`` commands, each in an environment of its own, from one started Python.

Started by :func:`tests.settings_support.run_manage_all`, with on stdin
``{"runs": [{"args": [...], "env": {...}}, ...], "preload": [module, ...]}``. It imports once the
libraries the commands need (:data:`PRELOAD` and the request's; of the project, only its pure
rules: nothing that reads the settings or the environment as it is imported), then forks a child
per run: the child takes the run's environment, sends its stdout and stderr to files of its own
and runs ``manage.py`` as ``python manage.py ARGS`` would. So each run reads its settings from
scratch, as a fresh process does, without paying the interpreter's start and the imports again.
On stdout, a JSON list of ``[returncode, stdout, stderr]``, one per run.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import tempfile
import threading
import traceback
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent

#: Imported before the forks: they read neither the settings nor the environment when imported.
PRELOAD = (
    "asyncio",
    "django.core.management",
    "django.db.models",
    "django.http",
    "django.urls",
    "django.contrib.auth.hashers",
    "django.core.checks",
    "django.test",
    "redis",
    "fakeredis",
    "rq",
    "rq.cron",
    "croniter",
    "markdown_it",
    "cryptography.fernet",
    "gameplay.rules",  # pure: no Django, no settings
)


#: Seconds a run may take: a run that hangs ends with a failure of its own (SIGALRM) rather
#: than holding up the whole batch until run_manage_all's timeout.
RUN_SECONDS = 60


def preload(names: tuple[str, ...]) -> None:
    """Import ``names``; one that fails is reported on stderr (the run that needs it imports it
    again, and fails saying why), the others are still imported."""
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            print(f"{Path(sys.argv[0]).stem}: preloading {name} failed:", file=sys.stderr)
            traceback.print_exc()


def check_fork_safe() -> None:
    """What makes a fork give each run a fresh start: no settings read yet (each child reads
    its own environment's), no thread but this one (a fork copies only the caller, and any lock
    another thread holds stays held), none of the project's config imported (it reads the
    environment as it is imported)."""
    from django.conf import settings

    assert not settings.configured, "Django's settings were configured before the fork"
    assert threading.active_count() == 1, f"threads alive before the fork: {threading.enumerate()}"
    config = sorted(m for m in sys.modules if m == "config" or m.startswith("config."))
    assert not config, f"imported before the fork: {config}"


def child(args: list[str], environ: dict[str, str], out: int, err: int) -> None:
    """In the forked child: ``python manage.py ARGS`` in ``environ``; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGALRM, timed_out)
        signal.alarm(RUN_SECONDS)
        os.environ.clear()
        os.environ.update(environ)
        os.chdir(ROOT)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        sys.argv = [str(ROOT / "manage.py"), *args]
        import manage

        try:
            manage.main()
            code = 0
        except SystemExit as ended:
            if ended.code is None:
                code = 0
            elif isinstance(ended.code, int):
                code = ended.code
            else:
                print(ended.code, file=sys.stderr)
                code = 1
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def timed_out(signum: int, frame: FrameType | None) -> None:
    """The child's SIGALRM: where the run hung, on its stderr, and the end of the child (an
    exception could be caught by the code that hangs)."""
    try:
        print(f"manage.py {' '.join(sys.argv[1:])} ran for more than {RUN_SECONDS} s, in:",
              file=sys.stderr)  # fmt: skip
        traceback.print_stack(frame, file=sys.stderr)
        sys.stderr.flush()
    finally:
        os._exit(124)


def run(args: list[str], environ: dict[str, str]) -> list[object]:
    check_fork_safe()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(args, environ, out.fileno(), err.fileno())
        _, status = os.waitpid(pid, 0)
        texts = []
        for file in (out, err):
            file.seek(0)
            texts.append(file.read().decode("utf-8", errors="replace"))
    return [os.waitstatus_to_exitcode(status), *texts]


def main() -> None:
    sys.path[0] = str(ROOT)  # as for ``python manage.py``, not this file's folder
    request = json.load(sys.stdin)
    runs = request["runs"]
    preload(PRELOAD + tuple(request["preload"]))
    gc.freeze()  # the preloaded heap: left alone by the children's collections (and not copied)
    results = [run(list(r["args"]), dict(r["env"])) for r in runs]
    sys.stdout.write(json.dumps(results))


if __name__ == "__main__":
    main()
