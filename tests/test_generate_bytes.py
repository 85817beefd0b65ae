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
        "testset": "43898c2f251779e8fe1441397e6eb57ef76f0b4c96cfea783f7e2b6c6ba9504c",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "19ff70be69ebfe39430ff8a819e603c279b5aded66926459faf00fde9cefd63c",
        "report": "8a907fc07a4fde70c6aac50513acc244c93eba7cfbf1252ebf6288535e16006a",
    },
    "every": {
        "testset": "351e7b9318dc76397fa1afb41a2428bdd576c92b68d74fe5f14a5b4bd98d7fd5",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "50e5bb2697e6f81706f0ffa9faa70ddeb1a8e067e5876faf153560822e12240c",
        "report": "fb071aea437f3d095bcf4e4f1bca213388c4b4ef5f6266e45b009ff8be233331",
    },
    "strict": {
        "testset": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "277c08e3609571b19875cbea3566dddbcfe2b642a9e036ae885f80ba7568007a",
        "report": "f31af7d921c0c4f3fc90bf8f03c3e4f48ba239d9620cde45b949759bf44ddf19",
    },
    "stated": {
        "testset": "90ed6b21d72bd865d07f06096ae0e12a35bd57e489e6958d37dee8ffa81c59c9",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "49f096364661d28ba52bbad36ed640cd514e0f316c4a856b362573be284f48fe",
        "report": "ce6667dd82c2197c75afd90f603e257e23ac3ed1b062a733752eead80858c135",
    },
    "unnamed": {
        "testset": "c5395cb60f48189e125e4c99121a478914e4af7e2b1a81eb52c1db0769358873",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "09d89e956f25238ea6de640e2ae4adaade42014e6f9803921588bf53bcc1d81e",
        "report": "560ac3ef2307afb9cb3f7272889138ac4071d6408a3f516bab511dafd8b25da2",
    },
    "comet": {
        "testset": "97808fa6dde5ae11d4fd392a709896a74bc578ce1e4df09a65f5a6c34805c835",
        "corpus": "8e4a6bc6abc3c50824e25f40cec98a34fb3f184fcec3cf773e770bcf6c2172aa",
        "dropped": "e556ca47e8bb141cd2b3812e2dc0ed4ab964dd7a8a639e7d406023596e5931c2",
        "report": "81ada666c7a9d56a0be3fb94d0fe1e3f1fd1c28879b299323e4afa023bbf5678",
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
