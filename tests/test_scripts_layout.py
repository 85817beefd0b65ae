"""scripts/: every script has its line in scripts/README.md, sits in the folder of its kind, and
imports no private name of the package (a script uses what a user of localeval could)."""

from __future__ import annotations

import ast
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
KINDS = {"", "bench", "provenance", "verifier"}
"""The product's own scripts stay at the top; provenance/ and verifier/ (the learned verifier's
head, issue 28) make shipped constants, bench/ measures."""


def scripts() -> list[Path]:
    return sorted(p for p in SCRIPTS.rglob("*") if p.suffix in (".py", ".sh"))


def private_names(path: Path) -> list[str]:
    """Names starting with `_` imported from localeval's modules, modules of it whose path has
    one, and such attributes of a module imported from it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, modules = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("localeval"):
            parts = (node.module or "").split(".")
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") or any(p.startswith("_") for p in parts)]
            modules |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("localeval"):
                    found += [a.name] if any(p.startswith("_") for p in a.name.split(".")) else []
                    modules.add((a.asname or a.name).split(".")[0])
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_every_script_has_a_readme_line_and_a_kind_folder() -> None:
    readme = (SCRIPTS / "README.md").read_text(encoding="utf-8")
    assert scripts()
    for path in scripts():
        rel = path.relative_to(SCRIPTS)
        assert ("" if rel.parent == Path(".") else str(rel.parent)) in KINDS, rel
        assert f"`{path.name}`" in readme, f"{rel} has no line in scripts/README.md"


def test_no_script_imports_a_private_name() -> None:
    offenders = {str(p.relative_to(SCRIPTS)): private_names(p) for p in scripts()
                 if p.suffix == ".py"}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_private_name_check_finds_them(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from localeval.models.backends import _make_judge\n"
                   "from localeval.models import embed\n"
                   "embed._companion('en')\nembed.store_for\n", encoding="utf-8")
    assert private_names(bad) == ["localeval.models.backends._make_judge", "embed._companion"]
