"""CI: audit the pinned set (constraints.txt) with pip-audit and say plainly what it found.

Exit 1 when a pinned package has a known vulnerability. When the vulnerability service cannot
audit some packages (unreachable, or it does not know the pinned versions), say so on stderr,
naming them: that is no clean result. It fails CI too when PIP_AUDIT_STRICT=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    command = [
        str(ROOT / ".venv" / "bin" / "pip-audit"),
        "-r",
        str(ROOT / "constraints.txt"),
        "--no-deps",
        "--disable-pip",
        "--progress-spinner",
        "off",
        "--format",
        "json",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"CI: pip-audit could not run (exit {result.returncode}): {tail}", file=sys.stderr)
        return 1
    dependencies = report.get("dependencies", [])
    vulnerable = [d for d in dependencies if d.get("vulns")]
    skipped = [d for d in dependencies if d.get("skip_reason")]
    audited = len(dependencies) - len(skipped)
    for dep in vulnerable:
        ids = ", ".join(v.get("id", "?") for v in dep["vulns"])
        print(
            f"CI: pip-audit: {dep['name']} {dep.get('version')} is vulnerable: {ids}",
            file=sys.stderr,
        )
    if skipped:
        names = ", ".join(d["name"] for d in skipped)
        print(
            f"CI: WARNING: pip-audit could not audit {len(skipped)} of {len(dependencies)} "
            f"pinned packages (the vulnerability service did not answer for them: "
            f"{skipped[0]['skip_reason']}): {names}. They are NOT known to be safe.",
            file=sys.stderr,
        )
    if vulnerable:
        return 1
    if skipped and os.environ.get("PIP_AUDIT_STRICT") == "1":
        return 1
    if audited == 0:
        print("CI: pip-audit: NOTHING AUDITED (see the warning above)")
    else:
        print(
            f"CI: pip-audit: {audited} of {len(dependencies)} pinned packages audited, "
            f"no known vulnerabilities"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
