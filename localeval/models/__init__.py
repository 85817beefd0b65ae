"""The models a run uses: the manifest of known models and their files (`manifest`: which
files, where, their sha256), fetching them (`pull`), checking them before anything loads
(`preflight`), the embedder (`embed`) and the backends a run builds from the settings
(`backends`: the judge behind its answer cache, the embedder). `from localeval import models`
gives the manifest's names."""

from localeval.models.manifest import (
    REPO_MODELS,
    Manifest,
    ModelSpec,
    ModelState,
    bundled_manifest,
    check,
    expected_sha256,
    file_sha256,
    load_manifest,
    models_dir,
    path_sha256,
    require,
    sha256_of_user_path,
    tree_files,
    tree_sha256,
    write_stamp,
)

__all__ = [
    "REPO_MODELS",
    "Manifest",
    "ModelSpec",
    "ModelState",
    "bundled_manifest",
    "check",
    "expected_sha256",
    "file_sha256",
    "load_manifest",
    "models_dir",
    "path_sha256",
    "require",
    "sha256_of_user_path",
    "tree_files",
    "tree_sha256",
    "write_stamp",
]
