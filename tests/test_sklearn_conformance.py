"""scikit-learn's own tests of its KernelPCA, run on kpcacli.KernelPCA: the file of the installed
release (``sklearn/decomposition/tests/test_kernel_pca.py``), unchanged but for the import,
at two values of its global random seed. A drop-in passes them all."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SEEDS = ("42", "7")  # scikit-learn's default seed and one other
IMPORT = "from sklearn.decomposition import PCA, KernelPCA\n"
SWAPPED = "from sklearn.decomposition import PCA\nfrom kpcacli import KernelPCA\n"


def scikit_learn_tests() -> Path | None:
    """The installed release's test file, or None where scikit-learn's tests are not installed."""
    try:
        spec = importlib.util.find_spec("sklearn.decomposition.tests.test_kernel_pca")
    except ModuleNotFoundError:
        return None
    return Path(spec.origin) if spec is not None and spec.origin else None


def outcomes(tests: Path, seed: str, folder: Path) -> dict[str, bool]:
    """{test id: passed} of `tests` run by pytest in a fresh process with scikit-learn's
    fixtures (its conftest, loaded as a plugin) at global random seed `seed`."""
    report = folder / f"report-{seed}.xml"
    environment = {**os.environ, "SKLEARN_TESTS_GLOBAL_RANDOM_SEED": seed}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "sklearn.conftest", "-p", "no:cacheprovider", "-p", "no:xdist"]
        + [str(tests), f"--junitxml={report}", f"--rootdir={folder}"],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
    )
    results = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        failed = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        if not skipped:
            results[case.get("name")] = not failed
    return results


@pytest.mark.parametrize("seed", SEEDS)
def test_scikit_learns_kernel_pca_tests_pass_with_the_import_swapped(seed, tmp_path):
    original = scikit_learn_tests()
    if original is None:
        pytest.skip("scikit-learn's tests are not installed")
    text = original.read_text()
    assert text.count(IMPORT) == 1, "scikit-learn's test file imports KernelPCA otherwise: update IMPORT"
    tests = tmp_path / "test_kernel_pca.py"
    tests.write_text(text.replace(IMPORT, SWAPPED))
    results = outcomes(tests, seed, tmp_path)
    assert len(results) >= 39  # the release in the lock: 39 cases at one seed
    assert all(results.values()), f"failing: {sorted(name for name, ok in results.items() if not ok)}"
