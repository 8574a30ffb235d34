"""The lowest release series of every dependency pyproject.toml declares, as pip constraints.

`make test-floors` installs kpcacli with these (the runtime dependencies, the test, lint and
cluster extras the quick suite needs, and the build backend) and runs the quick suite: what a
user whose environment holds the oldest versions kpcacli accepts would run, as scikit-learn's
own CI runs its minimum versions. A floor ``name>=1.24`` becomes ``name==1.24.*`` (the newest
patch of that series); a floor that installs or works no more is raised in pyproject.toml.

Usage: python .ci/floors.py [EXTRA ...] > floors.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A requirement with a lower bound: its name, extras and the version after ">=".
FLOOR = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*[^;]*?>=\s*([0-9][0-9A-Za-z.]*)")


def floors(extras: list[str]) -> dict[str, str]:
    """``{name: "name==A.B.*"}`` for the dependencies, the named extras' and the build system's."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    requirements = [*project["build-system"]["requires"], *project["project"]["dependencies"]]
    for extra in extras:
        requirements += project["project"]["optional-dependencies"][extra]
    pins: dict[str, str] = {}
    for requirement in requirements:
        match = FLOOR.match(requirement)
        if match is None:
            sys.exit(f"{requirement!r} in pyproject.toml declares no floor (name>=version)")
        name, version = match.group(1).lower(), match.group(3)
        series = ".".join(version.split(".")[:2]) if "." in version else version
        pins[name] = f"{name}=={series}.*"
    return pins


if __name__ == "__main__":
    print("\n".join(floors(sys.argv[1:]).values()))
