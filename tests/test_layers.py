"""The package's layers (docs/architecture.md): each module imports only from its own layer or
the layers below, and no import cycle exists, counting imports inside functions and
type-only ones. Read from the source with ast, so a lazy import cannot hide an edge."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np

PACKAGE = Path(__file__).resolve().parent.parent / "kpcacli"

# Layer 1 is two halves side by side: the mathematics on arrays, and reading and writing files.
# Numerics never import input/output (a Gram that opened a video could not be reused on data
# from elsewhere); input/output may use numerics.
NUMERICS = {"numerics"} | {
    f"numerics.{name}"
    for name in ("gram", "kernels", "centring", "spectrum", "metrics", "landmarks", "novelty", "linearaxes")
}
INPUT_OUTPUT = {"io", "request"} | {
    f"io.{name}"
    for name in ("sources", "request", "outputs", "codes", "ownership", "video", "videowriter", "provenance")
}  # "request": the path the README shows, re-exporting io.request
# The model file, one package (kpcacli/modelfile/): it writes the state and the solvers' parts.
MODEL_FILE = {
    "modelfile",
    "modelfile.container",
    "modelfile.zarrformat",
    "modelfile.zarrlayout",
    "modelfile.zarrwrite",
    "modelfile.storedframes",
    "modelfile.zarrread",
    "modelfile.framecodec",
    "modelfile.storechoice",
    "modelfile.axes",
}

LAYERS = {
    0: {"utils"}
    | {f"utils.{name}" for name in ("errors", "progress", "atomic", "checks", "parallel", "version", "budgets")},
    1: NUMERICS | INPUT_OUTPUT,
    2: {"model", "model.state", "model.neighbours", "model.validation", "model.spectralfit"},
    3: {
        "preimage",
        "preimage.base",
        "preimage.choice",
        "preimage.discrepancy",
        "preimage.distance",
        "preimage.expansion",
        "preimage.fixed_point",
        "preimage.synthesis",
    }
    | {
        "preimage.gradient",
        "preimage.learned",
        "preimage.linear",
        "preimage.log",
        "preimage.nearest",
        "preimage.optimise",
    },
    4: {"estimators", "estimators.estimator", "estimators.sklearn_estimator", "estimators.store", "estimators.batches"}
    | MODEL_FILE,
    5: {
        "",
        "engines",
        "engines.engine",
        "engines.cluster",
        "engines.tasks",
        "workflows",
        "workflows.commands",
        "workflows.evaluation",
        "workflows.sweep",
        "workflows.report",
        "workflows.plots",
        "workflows.summary",
        "workflows.comparison",
    },  # "" is the package itself
    6: {"cli", "cli.group", "cli.options", "cli.fitting", "cli.coding", "cli.measuring", "__main__"},
}
LAYER_OF = {module: layer for layer, modules in LAYERS.items() for module in modules}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Package modules `path` imports, anywhere in the file (relative or absolute)."""
    name = module_name(path)
    parts = name.split(".") if name else []
    package = parts if path.name == "__init__.py" else parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = [*base, *(node.module.split(".") if node.module else [])]
            elif node.module and node.module.startswith("kpcacli"):
                target = node.module.split(".")[1:]
            else:
                continue
            if not node.module or node.module == "kpcacli":
                # `from . import x` runs the package's __init__ first: an edge to the package
                # too (the front, layer 5), as Python runs it.
                found.add(".".join(target))
            for alias in node.names:
                candidate = ".".join([*target, alias.name])
                found.add(candidate if candidate in LAYER_OF else ".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kpcacli"):
                    found.add(".".join(alias.name.split(".")[1:]))
    found.discard(name)
    return found


def graph() -> dict[str, set[str]]:
    return {module_name(path): imports(path) for path in PACKAGE.rglob("*.py")}


def test_every_module_has_a_layer():
    assert sorted(set(graph()) - set(LAYER_OF)) == []


def test_every_listed_module_exists():
    assert sorted(set(LAYER_OF) - set(graph())) == []


def test_numerics_import_no_input_output():
    edges = graph()
    leaks = [f"{module} imports {target}" for module in sorted(NUMERICS) for target in edges[module] & INPUT_OUTPUT]
    assert leaks == []


def test_modules_import_only_from_their_layer_or_below():
    upward = [
        f"{module or 'kpcacli'} (layer {LAYER_OF[module]}) imports {target or 'kpcacli'} (layer {LAYER_OF[target]})"
        for module, targets in graph().items()
        for target in targets
        if LAYER_OF[target] > LAYER_OF[module]
    ]
    assert upward == []


def test_no_import_cycles():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module, path):
        state[module] = 1
        for target in sorted(edges[module]):
            if state.get(target) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*path, module, target]))
            if target not in state:
                visit(target, [*path, module])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [])


def test_help_imports_no_heavy_library():
    """`kpca --help` (and so every command's start) loads none of scipy, imageio, matplotlib, dask."""
    code = (
        "import sys\nfrom kpcacli.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('loaded:', *sorted(m for m in ('scipy', 'imageio', 'matplotlib', 'dask', 'distributed') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage:" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "loaded:"


def test_fit_encode_and_decode_from_the_command_line_load_neither_scipy_nor_zarr(tmp_path):
    """The command line holds every BLAS to one thread through the environment, so a fit (which
    needs no scipy) does not load scipy only to limit its BLAS (that cost it 0.28 s); kpca's
    own model files are read without zarr (0.2 s of every decode: kpcacli.modelfile.zarrread); no bar is
    shown, so tqdm is not loaded."""
    frames, model, codes = tmp_path / "frames.npy", tmp_path / "m.npz", tmp_path / "codes.npy"
    np.save(frames, np.random.default_rng(0).integers(0, 256, size=(12, 8, 8), dtype=np.uint8))
    commands = [
        ["fit", str(frames), "-m", str(model), "-k", "2", "-q"],
        ["encode", str(frames), "-m", str(model), "-o", str(codes), "-q"],
        ["decode", str(codes), "-m", str(model), "-o", f"{tmp_path}/back/", "-q"],
    ]
    for command in commands:
        code = (
            "import sys\nfrom kpcacli.cli import main\n"
            f"try:\n    main({command!r})\n"
            "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
            "print('loaded:', *sorted(m for m in ('scipy', 'tqdm', 'zarr') if m in sys.modules))"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert result.stdout.strip().splitlines()[-1] == "loaded:", command[0]


def test_every_import_the_readme_and_docs_show_still_works():
    """The README and docs/ show import paths (the package's layout may move under them: a
    moved module leaves a re-export at the path they show); each runs as written."""
    root = PACKAGE.parent
    texts = [(root / "README.md").read_text(), *(path.read_text() for path in (root / "docs").glob("*.md"))]
    lines = {
        line.strip()
        for text in texts
        for line in text.splitlines()
        if line.strip().startswith(("from kpcacli", "import kpcacli"))
    }
    assert any("kpcacli.request" in line for line in lines)  # the README's, a re-export of io.request
    code = "\n".join(sorted(lines))
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_every_file_and_function_the_docs_name_exists():
    """docs/architecture.md's map names steps as ``dir/file.py:function`` and the docs name
    files as ``kpcacli/.../file.py``: each file exists, and each function or class (or method,
    ``Class.method``) is defined in it."""
    import re

    root = PACKAGE.parent
    texts = [(root / "README.md").read_text(), *(path.read_text() for path in (root / "docs").glob("*.md"))]
    missing = []
    for text in texts:
        for path in re.findall(r"kpcacli/[\w/]+\.py", text):
            if not (root / path).is_file():
                missing.append(path)
        for path, name in re.findall(r"`([\w/]+\.py):([\w.]+)`", text):
            source = PACKAGE / path
            defined = (
                {
                    node.name
                    for node in ast.walk(ast.parse(source.read_text()))
                    if isinstance(node, (ast.FunctionDef, ast.ClassDef))
                }
                if source.is_file()
                else set()
            )
            if not set(name.split(".")) <= defined:
                missing.append(f"{path}:{name}")
    assert missing == []
