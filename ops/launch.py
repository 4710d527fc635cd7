"""``python -m ops.launch PARENT_PID COMMAND...``: run COMMAND so that it dies with its
supervisor.

On Linux the process asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``,
kept across ``exec``), checks that the parent is still the supervisor (it may have died
already), then becomes COMMAND. So even a supervisor killed with SIGKILL leaves no orphans.
Elsewhere it simply becomes COMMAND.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the supervisor's own cleanup still applies
        pass


def main(argv: list[str]) -> int:
    if len(argv) < 2 or not argv[0].isdigit():
        print("usage: python -m ops.launch PARENT_PID COMMAND...", file=sys.stderr)
        return 2
    die_with_parent()
    if os.getppid() != int(argv[0]):
        return 1  # the supervisor is already gone
    command = argv[1:]
    os.execvp(command[0], command)
    return 127  # pragma: no cover - execvp does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
