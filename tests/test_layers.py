"""The package's layers (docs/architecture.md): each module imports only from its own layer or
the layers below, and no import cycle exists, counting imports inside functions and
type-only ones. Read from the source with ast, so a lazy import cannot hide an edge."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest
from helpers import loaded_by, syntax_nodes

from kpcacli import FrameModel

PACKAGE = Path(__file__).resolve().parent.parent / "kpcacli"

# The packages of kpcacli/, lowest first, with their layer: each package imports only from
# itself and the packages before it. Within a layer the order is the one the code has: the
# numerics never import input/output (a Gram that opened a video could not be reused on data
# from elsewhere), the estimators save and load through the model file, the workflows run
# over the engines. "" is the package's front (kpcacli/__init__.py), "request" the path the
# README shows for io.request (a re-export).
PACKAGES = [
    ("utils", 0),
    ("numerics", 1),
    ("io", 1),
    ("request", 1),
    ("model", 2),
    ("preimage", 3),
    ("modelfile", 4),
    ("estimators", 4),
    ("", 4),
    ("engines", 5),
    ("workflows", 5),
    ("cli", 6),
    ("__main__", 6),
]
RANK = {package: rank for rank, (package, _) in enumerate(PACKAGES)}
LAYER = dict(PACKAGES)


def package_of(module: str) -> str:
    """The package of kpcacli/ a module belongs to ("" for the front itself)."""
    return module.split(".")[0]


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
    for node in syntax_nodes(path):
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
                found.add(candidate if candidate in MODULES else ".".join(target))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("kpcacli"):
                    found.add(".".join(alias.name.split(".")[1:]))
    found.discard(name)
    return found


MODULES = {module_name(path) for path in PACKAGE.rglob("*.py")}


def graph() -> dict[str, set[str]]:
    return {module_name(path): imports(path) for path in PACKAGE.rglob("*.py")}


def test_every_module_is_in_a_package_with_a_place():
    assert sorted(module for module in graph() if package_of(module) not in RANK) == []


def test_every_package_with_a_place_exists():
    assert sorted(set(RANK) - {package_of(module) for module in graph()}) == []


def test_every_package_says_its_job_and_layer():
    """Each subpackage's docstring names its layer, as docs/architecture.md does."""
    for package, layer in PACKAGES:
        if (PACKAGE / package / "__init__.py").is_file():
            docstring = ast.get_docstring(ast.parse((PACKAGE / package / "__init__.py").read_text())) or ""
            assert f"layer {layer}" in docstring.lower(), package


def test_packages_import_only_themselves_and_the_packages_below():
    upward = [
        f"{module or 'kpcacli'} imports {target or 'kpcacli'}: {package_of(target) or 'the front'} is not below "
        f"{package_of(module) or 'the front'}"
        for module, targets in graph().items()
        for target in targets
        if package_of(target) != package_of(module) and RANK[package_of(target)] > RANK[package_of(module)]
    ]
    assert upward == []


def test_the_command_line_reaches_the_workflows_through_their_registry():
    """cli/ imports workflows/ only by the package's exported names, and the registry holds an
    entry point for every command the command line has."""
    from kpcacli.cli import main
    from kpcacli.workflows import COMMANDS

    direct = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        if package_of(module) == "cli"
        for target in targets
        if package_of(target) == "workflows" and target != "workflows"
    )
    assert direct == []
    assert sorted(COMMANDS) == sorted(main.commands)


def test_the_solvers_read_frames_through_the_model_s_interface_alone():
    """The frames a state holds are read through kpcacli.model.framerows: no module outside the
    model file probes a frame object for what it can do (hasattr or getattr with a literal
    attribute name of RowsOnDemand's), and no solver imports the model file."""
    from kpcacli.model.framerows import RowsOnDemand

    members = {name for name in dir(RowsOnDemand) if not name.startswith("__")} | {"matrix", "row"}
    probes = []
    for path in PACKAGE.rglob("*.py"):
        if package_of(module_name(path)) == "modelfile":
            continue
        for node in syntax_nodes(path):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in members
            ):
                probes.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.func.id}(..., {node.args[1].value!r})")
    assert probes == []
    solvers_reaching = sorted(
        f"{module} imports {target}"
        for module, targets in graph().items()
        if package_of(module) == "preimage"
        for target in targets
        if package_of(target) == "modelfile"
    )
    assert solvers_reaching == []


def test_the_engines_work_on_fitted_states_not_on_estimators():
    """The engines and their tasks encode and denoise a fitted state through
    kpcacli.estimators.operations, as FrameModel does; none builds a FrameModel again."""
    assert (
        sorted(
            f"{module} imports {target}"
            for module, targets in graph().items()
            if package_of(module) == "engines"
            for target in targets
            if target == "estimators.estimator"
        )
        == []
    )


def architecture_map() -> tuple[dict[str, int], list[tuple[str, list[str], str]]]:
    """docs/architecture.md's map of kpcacli/: each package's layer (a folder, or a module of
    the front: ``__init__``, ``request``, ``__main__``), and each row of modules as (package,
    modules, job), the job's continuation lines joined."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    block = text.split("```\nkpcacli/\n", 1)[1].split("```", 1)[0]
    layers, rows, package = {}, [], None
    for line in block.splitlines():
        if top := re.match(r"^  (\w+)(/?)\s+(\d)\s+(.*)$", line):
            layers[top[1]] = int(top[3])
            if top[2]:
                package = top[1]
            else:  # a module of the front
                rows.append(("", [top[1]], top[4]))
        elif row := re.match(r"^    (\w[\w, ]*?)(?:\s{2,}(.*))?$", line):
            rows.append((package, [name.strip() for name in row[1].split(",")], row[2] or ""))
        else:
            package_, names, job = rows[-1]
            rows[-1] = (package_, names, f"{job} {line.strip()}".strip())
    return layers, rows


def test_the_architecture_map_names_every_module_once_and_nothing_else():
    """The map and the package, both ways: every module is named once, every name is a module,
    and every package has the layer the layer tests give it."""
    layers, rows = architecture_map()
    named = [f"{package}.{name}" if package else name for package, names, _ in rows for name in names]
    modules = {module for module in MODULES if module and module.split(".")[-1] != "__init__"}
    modules |= {"__init__"}  # the front: kpcacli/__init__.py
    modules -= {package for package, _ in PACKAGES}  # a package's __init__ is its own row
    modules |= {"request", "__main__"}
    assert sorted(name for name in set(named) if named.count(name) > 1) == []
    assert sorted(set(named) - modules) == [] and sorted(modules - set(named)) == []
    assert layers == {package or "__init__": layer for package, layer in PACKAGES}


def test_every_module_the_map_names_has_one_job():
    """A module's row in the map says its one job: no two clauses joined by a semicolon
    (outside parentheses), and a row naming several modules names one of a kind each (the
    solvers, the commands' entry points), saying "each". A module that does two jobs is split
    where they part, whatever its length."""
    _, rows = architecture_map()
    two_jobs = []
    for package, names, job in rows:
        depth, clauses = 0, 1
        for character in job:
            depth += (character == "(") - (character == ")")
            clauses += character == ";" and depth == 0
        if not job or clauses > 1 or (len(names) > 1 and " each" not in job):
            two_jobs.append(f"{package}: {', '.join(names)}")
    assert two_jobs == []


def public_api() -> dict[str, list[str]]:
    """docs/architecture.md's table of the public API: module -> names."""
    text = (PACKAGE.parent / "docs" / "architecture.md").read_text()
    section = text.split("## The public API", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)` \| (.+) \|$", section, flags=re.MULTILINE)
    return {module: re.findall(r"`(\w+)`", names) for module, names in rows}


def test_the_public_api_is_listed_once_and_each_name_imports():
    """The docs' list is each public module's ``__all__`` (kpcacli's without KernelPCA, which
    imports scikit-learn), and every name on it imports."""
    import importlib

    api = public_api()
    assert set(api) == {"kpcacli", "kpcacli.request", "kpcacli.workflows"}
    for module_path, names in api.items():
        module = importlib.import_module(module_path)
        exported = set(module.__all__) | ({"KernelPCA"} if module_path == "kpcacli" else set())
        assert exported == set(names), module_path
        for name in names:
            assert getattr(module, name) is not None, f"{module_path}.{name}"


def test_the_ranks_keep_the_layers_in_order():
    assert [layer for _, layer in PACKAGES] == sorted(layer for _, layer in PACKAGES)


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
    """`kpca --help` (and so every command's start) loads none of scipy, imageio, matplotlib,
    dask, OpenCV."""
    code = (
        "import sys\nfrom kpcacli.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print('loaded:', *sorted(m for m in ('scipy', 'imageio', 'matplotlib', 'dask', 'distributed', 'cv2') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage:" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "loaded:"


@pytest.mark.slow
def test_fit_encode_and_decode_from_the_command_line_load_neither_scipy_nor_zarr(tmp_path):
    """The command line holds every BLAS to one thread through the environment, so a fit (which
    needs no scipy) does not load scipy only to limit its BLAS; kpca's own model files are read
    without zarr (kpcacli.modelfile.zarrread); no bar is shown, so tqdm is not loaded; OpenCV
    is loaded by the transport solver alone: a fit, which scores it, and a decode with it."""
    frames, model, codes = tmp_path / "frames.npy", tmp_path / "m.npz", tmp_path / "codes.npy"
    np.save(frames, np.random.default_rng(0).integers(0, 256, size=(12, 8, 8), dtype=np.uint8))
    fit = ["fit", str(frames), "-m", str(model), "-k", "2", "-q"]
    assert loaded_by(fit, ("scipy", "tqdm", "zarr", "cv2")) == ["cv2"]
    assert FrameModel.load(model).state_.solver_choice.solver != "transport"  # noise: nothing moves
    commands = [
        ["encode", str(frames), "-m", str(model), "-o", str(codes), "-q"],
        ["decode", str(codes), "-m", str(model), "-o", f"{tmp_path}/back/", "-q"],
    ]
    for command in commands:
        assert loaded_by(command, ("scipy", "tqdm", "zarr", "cv2")) == [], command[0]
    transport = ["decode", str(codes), "-m", str(model), "-o", f"{tmp_path}/moved/", "-q", "--solver", "transport"]
    assert loaded_by(transport, ("cv2",)) == ["cv2"]


@pytest.mark.slow
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
                {node.name for node in syntax_nodes(source) if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
                if source.is_file()
                else set()
            )
            if not set(name.split(".")) <= defined:
                missing.append(f"{path}:{name}")
    assert missing == []


# A figure measured on one machine (a time, a PSNR, a speed-up) belongs to docs/ and
# benchmarks/results/, where it is dated and reproducible; the code keeps the rule it led to.
MEASURED_FIGURE = re.compile(
    r"\d+(?:\.\d+)?\s?(?:ms|µs|dB)\b|\d+\.\d+\s?s\b|\d+(?:\.\d+)?\s?(?:times|x) (?:faster|slower)|GFLOP/s"
)
FACTS_IN_UNITS = ("rounded to 10 ms steps",)  # GIF's time base, a property of the format


def comments_and_docstrings(path: Path):
    """(line, text) of every comment and docstring of `path`, example output (between double
    backticks) left out."""
    source = path.read_text()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield (node.body[0].lineno, re.sub(r"``.*?``", "", docstring, flags=re.S))


@pytest.mark.slow
def test_no_comment_or_docstring_quotes_a_measured_figure():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, text in comments_and_docstrings(path):
            for fact in FACTS_IN_UNITS:
                text = text.replace(fact, "")
            found += [
                f"{path.relative_to(PACKAGE)}:{line}: {match.group()}" for match in MEASURED_FIGURE.finditer(text)
            ]
    assert not found, found


def test_the_device_is_a_backend_chosen_once_not_a_branch_at_each_pass():
    """Where the array algebra runs is one object (numerics/backend.py's Backend), chosen once per
    command or estimator and handed down: no pass branches on an accelerator argument, and no
    pass has a device twin beside it (one body a backend, in hostbackend.py and
    arraybackend.py); utils/arrays.py alone speaks of devices themselves (an array's, a name's)."""
    branches, twins = [], []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        name = str(path.relative_to(PACKAGE))
        if name != "numerics/backend.py" and re.search(r"\bon is (not )?None\b", source):
            branches.append(name)
        twins += [f"{name}:{node.name}" for node in syntax_nodes(path) if name != "utils/arrays.py"
                  and isinstance(node, ast.FunctionDef) and node.name.startswith("device_")]  # fmt: skip
    assert branches == [] and twins == []
