"""Print the import cycles among localeval's modules as JSON (top-level imports, and with
`--lazy` also those inside functions); exit 1 when there is one. `from pkg import mod` counts as
an import of `pkg.mod`, and of `pkg` itself only for names that `pkg/__init__` defines.

    python scripts/import_cycles.py [--lazy]
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "localeval"


def modules() -> dict[str, Path]:
    out = {}
    for f in ROOT.rglob("*.py"):
        name = ".".join(("localeval", *f.relative_to(ROOT).with_suffix("").parts))
        out[name.removesuffix(".__init__")] = f
    return out


def graph(mods: dict[str, Path], lazy: bool) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, f in mods.items():
        tree = ast.parse(f.read_text(encoding="utf-8"))
        nodes = ast.walk(tree) if lazy else iter(tree.body)
        deps: set[str] = set()
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module:
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(mods)
                deps |= subs
                if len(subs) < len(node.names):  # a name defined in the package itself
                    deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        out[name] = {d for d in deps if d in mods and d != name}
    if lazy:  # `localeval.evaluate` is looked up lazily by the root's __getattr__: no cycle
        out["localeval"] = set()
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(g.get(node, ())):
            if state.get(dep) == 1:
                found.append([*stack[stack.index(dep):], dep])
            elif dep not in state:
                visit(dep, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(g):
        if node not in state:
            visit(node, [])
    return found


def main() -> int:
    lazy = "--lazy" in sys.argv
    found = cycles(graph(modules(), lazy))
    print(json.dumps({"lazy_imports_included": lazy, "cycles": found}, indent=1))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
