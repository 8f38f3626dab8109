"""The project's modules import one way: no import cycle among `pipeline` and `schemas` modules, and each module
imports only from the layers its own layer may (the matrix below), counting imports inside functions and under
TYPE_CHECKING too."""

import ast

from tests.conftest import ROOT

PACKAGES = ("pipeline", "schemas", "benchmarks")


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            deps: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    if node.module.split(".")[0] in PACKAGES:
                        for (
                            a
                        ) in node.names:  # from pipeline import incremental: the module pipeline.transform.incremental
                            sub = ROOT / node.module.replace(".", "/") / a.name
                            is_module = sub.with_suffix(".py").exists() or (sub / "__init__.py").exists()
                            deps.add(f"{node.module}.{a.name}" if is_module else node.module)
                elif isinstance(node, ast.Import):
                    deps |= {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
            graph[name] = {d for d in deps if d != name and not name.startswith(d + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state = [], {}

    def visit(node, stack):
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if dep not in graph:
                continue
            if state.get(dep) == 1:
                found.append(stack[stack.index(dep) :] + [dep])
            elif state.get(dep) is None:
                visit(dep, stack + [dep])
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node, [node])
    return found


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_checker_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


#: Each layer is a folder of ``pipeline/`` ("pipeline.storage.*": the package and every module in it), so the folder
#: names show the layers; the test below holds that no module sits outside one.
LAYER_OF = {
    # what every layer may use: errors and exit codes, text, settings and the formats' settings shapes, what a model
    # file is and where the SQL lives, named SQL queries; and what a row is (schemas)
    "base": {"pipeline", "pipeline.base.*", "schemas.*"},
    # the files: the DuckDB connections, the lake, the meta tables, the published snapshots
    "storage": {"pipeline.storage.*"},
    # a file's journey into the ledger
    "ingest": {"pipeline.ingest.*"},
    # the demo and benchmark landing data
    "sample": {"pipeline.sample.*"},
    # what is fetched from other systems into the landing folder (never the ledger itself)
    "pull": {"pipeline.pull.*"},
    # the SQL models run
    "transform": {"pipeline.transform.*"},
    # a run: load, build, publish
    "run": {"pipeline.run.*"},
    # what reads the published file
    "serve": {"pipeline.serve.*"},
    # development tooling of the source checkout (not in the wheel), which the command imports when asked
    "tools": {"benchmarks.*"},
    "cli": {"pipeline.cli.*"},
}
#: The layers each layer may import from (its own included).
ALLOWED = {
    "base": {"base"},
    "storage": {"base", "storage"},
    "ingest": {"base", "storage", "ingest"},
    "sample": {"base", "sample"},
    "pull": {"base", "pull"},
    "transform": {"base", "storage", "transform"},
    "run": {"base", "storage", "ingest", "transform", "run"},
    "serve": {"base", "serve"},
    "tools": {"base", "storage", "ingest", "sample", "transform", "run", "serve", "tools"},
    "cli": set(LAYER_OF),
}


def test_the_folders_of_pipeline_are_its_layers():
    """``pipeline/`` holds its package face and one folder a layer; a new module goes into the folder of its layer."""
    top = ROOT / "pipeline"
    folders = {p.name for p in top.iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(LAYER_OF) - {"tools"}
    assert sorted(p.name for p in top.glob("*.py")) == ["__init__.py"]


def layer_of(module: str) -> str | None:
    for name, entries in LAYER_OF.items():
        for entry in entries:
            if module == entry or (entry.endswith(".*") and (module + ".").startswith(entry[:-1])):
                return name
    return None


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """Each import that runs against the matrix, and each module with no layer, in words."""
    layer = {m: layer_of(m) for m in graph}
    found = [f"{m} has no layer: place it in LAYER_OF" for m in sorted(graph) if layer[m] is None]
    for module in sorted(graph):
        for dep in sorted(graph[module]):
            dep_layer = layer.get(dep) or layer_of(dep)
            if layer[module] and dep_layer and dep_layer not in ALLOWED[layer[module]]:
                found.append(f"{module} ({layer[module]}) imports {dep} ({dep_layer})")
    return found


def test_every_module_imports_only_from_the_layers_it_may():
    assert wrong_way(import_graph()) == []


def test_the_matrix_names_an_injected_wrong_way_import():
    graph = import_graph()
    graph["pipeline.storage.db"] = graph["pipeline.storage.db"] | {
        "pipeline.serve.report"
    }  # storage reaching up into the report
    graph["pipeline.newthing"] = set()
    assert wrong_way(graph) == [
        "pipeline.newthing has no layer: place it in LAYER_OF",
        "pipeline.storage.db (storage) imports pipeline.serve.report (serve)",
    ]


def test_every_function_fits_on_a_screen():
    """No function in the project's packages or scripts over 60 lines (as `ruff format` lays it out)."""
    long = []
    for folder in (*PACKAGES, "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    if lines > 60:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_every_module_is_at_most_600_lines():
    """A module longer than 600 lines does more than one job: split it by what it does."""
    long = [
        f"{path.relative_to(ROOT)} ({n} lines)"
        for folder in (*PACKAGES, "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600
    ]
    assert long == []


def _definitions():
    for folder in (*PACKAGES, "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                yield path.relative_to(ROOT), node


def test_no_function_takes_more_than_six_positional_parameters():
    """More than six are passed by name (after a ``*``): a call cannot shift one value into another's place."""
    wide = [
        f"{path}:{node.lineno} {node.name}"
        for path, node in _definitions()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and len([a for a in node.args.posonlyargs + node.args.args if a.arg not in ("self", "cls")]) > 6
    ]
    assert wide == []


def test_records_of_more_than_five_fields_are_built_by_name():
    """A dataclass with more than five fields is keyword-only: inserting a field cannot shift the values after it."""

    def kw_only(node: ast.ClassDef) -> bool | None:
        for d in node.decorator_list:
            call = d if isinstance(d, ast.Call) else None
            name = (call.func if call else d).id if isinstance(call.func if call else d, ast.Name) else None
            if name == "dataclass":
                return bool(
                    call and any(k.arg == "kw_only" and getattr(k.value, "value", False) for k in call.keywords)
                )
        return None  # not a dataclass

    positional = [
        f"{path}:{node.lineno} {node.name}"
        for path, node in _definitions()
        if isinstance(node, ast.ClassDef)
        and kw_only(node) is False
        and len([s for s in node.body if isinstance(s, ast.AnnAssign)]) > 5
    ]
    assert positional == []
