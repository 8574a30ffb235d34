"""What kpcacli declares holds: scikit-learn's private names come from one guarded module
(kpcacli.estimators.sklearn_compat), whose stand-ins serve the releases pyproject.toml accepts
that lack them; numpy's namespace is told from others by its whole name. `make test-floors`
runs the quick suite at the floors pyproject.toml declares (.ci/floors.py)."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("sklearn")


def test_scikit_learn_s_private_names_are_imported_in_one_module():
    """Every ``from sklearn... import _name`` or import from a private sklearn module is in
    sklearn_compat.py, where a release that lacks the name gets a stand-in."""
    offenders = []
    for path in sorted((ROOT / "kpcacli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("sklearn"):
                private = any(part.startswith("_") for part in node.module.split(".")) or any(
                    alias.name.startswith("_") for alias in node.names
                )
                if private and path.name != "sklearn_compat.py":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.module}")
    assert offenders == []


def test_a_release_without_check_same_namespace_gets_its_stand_in(monkeypatch):
    """scikit-learn 1.6 to 1.8 have no ``check_same_namespace`` (1.9's): the stand-in passes
    numpy inputs of a numpy fit, passes anything without array_api_dispatch, and refuses
    another namespace in one ValueError naming the method."""
    import sklearn.utils._array_api as array_api

    from kpcacli.estimators import sklearn_compat

    monkeypatch.delattr(array_api, "check_same_namespace", raising=False)
    stand_in = importlib.reload(sklearn_compat)
    try:
        fitted = types.SimpleNamespace(eigenvectors_=np.ones((3, 2)))
        check = stand_in.check_same_namespace
        assert check(np.ones((2, 2)), fitted, attribute="eigenvectors_", method="transform") is None
        other = types.SimpleNamespace(__name__="jax.numpy")
        monkeypatch.setattr(stand_in, "get_config", lambda: {"array_api_dispatch": True})
        monkeypatch.setattr(
            stand_in,
            "get_namespace_and_device",
            lambda array: (other, None, "gpu") if array is fitted.eigenvectors_ else (np, None, "cpu"),
        )
        with pytest.raises(ValueError, match=r"SimpleNamespace\.transform\(\).*same namespace"):
            check(np.ones((2, 2)), fitted, attribute="eigenvectors_", method="transform")
    finally:
        monkeypatch.undo()
        importlib.reload(sklearn_compat)


def test_numpy_s_namespace_is_told_by_its_whole_name():
    """jax.numpy ends with "numpy" and is not numpy's namespace."""
    import array_api_compat.numpy

    from kpcacli.utils.arrays import is_numpy

    assert is_numpy(np) and is_numpy(array_api_compat.numpy)
    assert is_numpy(types.SimpleNamespace(__name__="sklearn.externals.array_api_compat.numpy"))
    assert not is_numpy(types.SimpleNamespace(__name__="jax.numpy"))
    assert not is_numpy(types.SimpleNamespace(__name__="cupy"))


def test_the_floors_are_the_lowest_series_pyproject_declares():
    """.ci/floors.py pins each dependency `make test-floors` installs to the release series of
    its floor: numpy>=1.26 installs numpy 1.26.*; every requirement declares a floor."""
    shown = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "floors.py"), "test", "lint", "cluster"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "numpy==1.26.*" in shown and "scikit-learn==1.6.*" in shown and "zarr==3.1.*" in shown
    assert all("==" in pin and pin.endswith(".*") for pin in shown)
