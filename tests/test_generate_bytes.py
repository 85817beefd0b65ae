"""`localeval generate`'s output pinned to the byte: the rule judge of test_generate.py on the 20
documents of tests/data/generate_docs (en and zh), in several judge moods that reach every
filter, each output file's sha256 against the recorded one. A change to the generator's code
that is meant to move nothing (a layout change) must leave these equal; an intended change to
its rows records the new hashes (`python tests/test_generate_bytes.py` prints them)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from localeval.generate.store import paths_for
from tests.test_generate import DOCS, RuleJudge, run_gen

MOODS: dict[str, dict[str, Any]] = {
    "plain": {},
    "every": {"n": 50},
    "strict": {"verdict": 0, "rating": 3, "invent": True},
    "stated": {"stated": True, "knows": True, "rating": 0},
    "unnamed": {"question": "Who designed the bridge?", "rename_adds": "run"},
    "comet": {"question": "When did the comet pass closest to the Sun?"},
}
"""Judge moods (RuleJudge's arguments): everything kept, every check failing, casual forms that
state their answers and unanswerable questions it answers, questions naming no subject or
another name of it; `n`: kept per kind (8 unless given; 50 drafts every candidate)."""

PINNED = {
    "plain": {
        "testset": "0e1c224e0c3a3ebd4ce7a4f0b3528a43dd3776f93a69b9e18dc57550d77616b6",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "10a3b7692216b5173a8d031ecb81068e55f009d5fff353338d92b02317bc4d34",
        "report": "55cdc95b688be5d2d7cff0f68510fdd38da4c2ab4f705cafc40a63a4be3d40f4",
    },
    "every": {
        "testset": "75e7a370fc3ae6b1343f6925b13c2f10161729e02045f1cb5e944da9a1189906",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "c2724f03f4d23cc3bff5f6426b3abd957884a79aaf50d45d5aa82e0a75f8e400",
        "report": "bc6637ca3ef0a141eafbb47e361a85840ac871a8d6ac26dae3308bcc8e5d1e5c",
    },
    "strict": {
        "testset": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "09258278dbdbe9446848ec7f177e122a87cc484902fc35bdb94cd368e5616d4c",
        "report": "92ebf80aea23c5400220163a22514862086d9810c4ff229d0ecb187350133af7",
    },
    "stated": {
        "testset": "dd491fe7d31e6953c08733041940dbd699e7ba972e2bb58ec8d70f35484d8e49",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "a95c03725cca0ea150e789129258a1c480ee9c596898c3a9579b291fcfa42700",
        "report": "bee88083a543e2cbd808d636b401316de14c4397f8d12efbaf336f974dadb28e",
    },
    "unnamed": {
        "testset": "cfdf77c2cb01a0bab97786804bbbb7a21a893623bd0567f4be2b01d9c99b0b45",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "2ca20742b8d93edd2c79df6ca1703f297ca32590436e0399928b5f9a6914c655",
        "report": "ac84f0b4c65fc51c2ff9be82b8e0eda0d435e821d58d71c21909bad9cefbab2f",
    },
    "comet": {
        "testset": "f4162a58abf800a93ba203592d2a59c070f0fefea0fbc70b8be17a1fa73edb94",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "a205ab8031d1cc071696575b8549fb46843ddccc07824015ab4daa784efc76dd",
        "report": "5ba3aeb14f5aec4c6d93996c4dbe88532b20b5d21bc49c5fddebd00df50e596c",
    },
}


def hashes(mood: str, folder: Path) -> dict[str, str]:
    """Each output file of one generation (test set, corpus, dropped, report less its timing and
    models, its keys in their written order) by name: its sha256."""
    out = folder / mood / "testset.jsonl"
    mood_args = dict(MOODS[mood])
    n = mood_args.pop("n", 8)
    run_gen([DOCS], out, RuleJudge(**mood_args), n=n, settings={"no_cache": True})
    paths = paths_for(out)
    found = {}
    for name, path in (("testset", out), ("corpus", paths["corpus"]),
                       ("dropped", paths["dropped"])):
        found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    report = json.loads(paths["report"].read_text("utf-8"))
    for key in ("seconds", "seconds_per_kept_question", "models"):
        report.pop(key, None)
    found["report"] = hashlib.sha256(json.dumps(report, ensure_ascii=False).encode()).hexdigest()
    return found


@pytest.mark.parametrize("mood", list(MOODS))
def test_generate_writes_the_pinned_bytes(mood: str, tmp_path: Path) -> None:
    assert hashes(mood, tmp_path) == PINNED[mood]


if __name__ == "__main__":  # print the hashes of this tree, to record
    import os
    import tempfile

    os.environ.setdefault("LOCALEVAL_ALLOW_FAKE_JUDGE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        json.dump({m: hashes(m, Path(tmp)) for m in MOODS}, sys.stdout, indent=1)
