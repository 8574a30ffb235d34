"""Run one command and print its wall time and peak resident memory as JSON.

    python -m benchmarks.measure -- kpca fit frames/ -m model.npz

The command runs as the only child of this process, so ``RUSAGE_CHILDREN`` is exactly its
peak RSS (Linux reports ``ru_maxrss`` in KiB). Its output is discarded.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :] if "--" in argv else argv
    started = time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    print(
        json.dumps(
            {"seconds": seconds, "peak_mb": peak, "status": result.returncode, "stderr": result.stderr.decode()[-500:]}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
