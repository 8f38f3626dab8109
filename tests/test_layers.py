"""The project's modules import one way: no import cycle among `pipeline` and
`schemas` modules, counting imports inside functions and under TYPE_CHECKING too."""

import ast

from tests.conftest import ROOT

PACKAGES = ("pipeline", "schemas")


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
                        for a in node.names:  # from pipeline import incremental: the module pipeline.incremental
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


def test_every_function_fits_on_a_screen():
    """No function in the project's packages or scripts over 80 lines (as `ruff format` lays it out)."""
    long = []
    for folder in (*PACKAGES, "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    if lines > 80:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []
