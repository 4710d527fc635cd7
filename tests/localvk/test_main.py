"""The local VK as a program of its own: ``python -m localvk``, and a package that needs
neither Django nor vkbottle."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_no_module_imports_the_project_django_or_vkbottle() -> None:
    """localvk stands alone: the package and ``python -m localvk``'s module load neither Django
    nor vkbottle, and importing every one of its modules loads nothing of the project (nor
    Django, nor vkbottle), so it can leave the production image. One process checks both."""
    code = (
        "import sys, localvk, localvk.__main__\n"
        "early = sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'vkbottle'})\n"
        "assert not early, early\n"
        "import pkgutil\n"
        "for module in pkgutil.walk_packages(localvk.__path__, 'localvk.'):\n"
        "    __import__(module.name)\n"
        "banned = {'gameplay', 'outbox', 'vkbot', 'panel', 'config', 'demo', 'ops', 'bench',\n"
        "          'tests', 'django', 'vkbottle'}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        "assert not loaded, loaded\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True, timeout=60)


def test_python_dash_m_runs_the_server() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "localvk", "--port", "0", "--group-id", "5"],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = ""
        deadline = time.monotonic() + 20
        while "listening on" not in line and time.monotonic() < deadline:
            line = process.stderr.readline()
        match = re.search(r"(http://[\d.]+:\d+)/method/", line)
        assert match, line
        url = f"{match.group(1)}/method/groups.getById?access_token=group-token&v=5.199"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert b'"id": 5' in response.read()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
