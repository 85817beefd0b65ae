"""Every module, file and module's name a doc or docstring names exists — a path to a module
(with `.py`, or followed by `.name` or `.py:name`), the dotted `localeval.` form, a page of the
docs folder — in README.md, scripts/README.md, localeval/docs/*.md and the docstrings of
localeval/, scripts/ and tests/. A renamed module or function then fails here instead of
misleading a reader."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "localeval"
PREFIXES = sorted({"localeval", "scripts", "tests", "docs", "prompts", "research"}
                  | {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()})
EXTENSIONS = ("py", "md", "j2", "sh", "toml", "jsonl", "json", "txt", "tsv")
PATH = re.compile(
    r"(?<![\w./<:-])((?:" + "|".join(PREFIXES) + r")(?:/\w[\w-]*)+)"
    r"(?:\.(" + "|".join(EXTENSIONS) + r")\b)?(?:(?:\.|:)([A-Za-z_]\w*)\b(?!\.\w|/))?")
DOTTED = re.compile(r"(?<![\w./])localeval((?:\.[A-Za-z_]\w*)+)")
ROOTS = (ROOT, PACKAGE, PACKAGE / "docs")
ALWAYS_CHECKED = ("localeval/", "scripts/", "tests/")
EXAMPLES = {"tests/test_rag_quality.py"}
"""Files of the reader's own project that the docs show (README's pytest example)."""
WHEEL = {package.replace(".", "/"): folder for package, folder in tomllib.loads(
    (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    .items() if package.startswith("localeval.")}
"""Folders the wheel carries under another name (prompts/ as the package's _prompts)."""


def texts() -> list[tuple[str, str]]:
    """(where, text) of every doc page and every docstring (module, class, function, attribute)."""
    out = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8"))
           for p in [ROOT / "README.md", ROOT / "scripts" / "README.md",
                     *sorted((PACKAGE / "docs").glob("*.md"))]]
    for folder in ("localeval", "scripts", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, str)):
                    out.append((f"{path.relative_to(ROOT)}:{node.lineno}", node.value.value))
    return out


@cache
def top_level_names(path: Path) -> frozenset[str]:
    """Names a module defines at its top level (functions, classes, assignments, imports), and
    the methods and fields of its classes."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names |= {n.name for n in node.body
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
            if "__all__" in names and isinstance(node.value, (ast.List, ast.Tuple)):
                names |= {e.value for e in node.value.elts if isinstance(e, ast.Constant)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def module_file(base: Path) -> Path | None:
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def broken(path: str, ext: str | None, name: str | None) -> str | None:
    """Why a `path[.ext][.name]` reference names nothing, or None when it resolves."""
    ref = f"{path}.{ext}" if ext else path
    if ref in EXAMPLES:
        return None
    for packaged, folder in WHEEL.items():
        if path == packaged or path.startswith(packaged + "/"):
            path = folder + path[len(packaged):]
    for root in ROOTS:
        base = root / path
        if ext:
            target = base.with_name(f"{base.name}.{ext}")
            if not target.is_file():
                continue
            if name and ext == "py" and name not in top_level_names(target):
                return f"{path}.py has no {name!r}"
            return None
        module = module_file(base)
        if module is not None:
            return None if not name or name in top_level_names(module) else \
                f"{path} has no {name!r}"
        if base.exists() and not name:
            return None
    if not ext and not name and not path.startswith(ALWAYS_CHECKED):
        return None  # a bare folder-like word ("models/m3e-small"): not a module reference
    return f"{path}{'.' + ext if ext else ''} does not exist"


def dotted_broken(parts: list[str]) -> str | None:
    base = ROOT / "localeval"
    for i, part in enumerate(parts):
        nxt = base / part
        if (nxt / "__init__.py").is_file():
            base = nxt
            continue
        if nxt.with_name(part + ".py").is_file():
            rest = parts[i + 1:]
            module = nxt.with_name(part + ".py")
            return None if not rest or rest[0] in top_level_names(module) else \
                f"localeval.{'.'.join(parts[:i + 1])} has no {rest[0]!r}"
        if part in top_level_names(base / "__init__.py"):
            return None
        return f"localeval.{'.'.join(parts[:i + 1])} does not exist"
    return None


def problems(where: str, text: str) -> list[str]:
    found = []
    for m in PATH.finditer(text):
        why = broken(m.group(1), m.group(2), m.group(3))
        if why:
            found.append(f"{where}: {m.group(0)!r}: {why}")
    for m in DOTTED.finditer(text):
        why = dotted_broken(m.group(1).lstrip(".").split("."))
        if why:
            found.append(f"{where}: {m.group(0)!r}: {why}")
    return found


def test_every_named_module_file_and_name_exists() -> None:
    found = [p for where, text in texts() for p in problems(where, text)]
    assert found == []


@pytest.mark.parametrize("text", [
    "see metrics/claims.referents", "`metrics/chunking.verdict_style`",
    "(tests/test_engine_layout.py checks it)", "Modules: `localeval.cli.evaluate`",
    "judge/llamacpp/llama.py:no_such_function", "`metrics/claims/evidence.spelled_words`"])
def test_a_reference_to_nothing_is_found(text: str) -> None:
    assert problems("here", text)


@pytest.mark.parametrize("text", [
    "metrics/claims/split.referents", "metrics/claims/checks.spelled_numbers",
    "judge/llamacpp/llama.py:make_chat_formatter", "localeval.text.split_sentences",
    "docs/engine.md", "scripts/bench/bench_engine.py", "prompts/<lang>/<step>.j2",
    "../shared/data/dev", "models/m3e-small", "metrics/claims/split.py."])
def test_a_reference_to_something_passes(text: str) -> None:
    assert problems("here", text) == []
