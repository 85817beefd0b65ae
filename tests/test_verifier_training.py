"""The verifier's training rows (scripts/verifier/) differ from each other only in support: a
paraphrase is kept only when it is not a near-copy and keeps every number, a Chinese denial is
turned into an assertion (so negative form does not mean unsupported), and the paraphrase rows
pair a supported rewrite with an edit of the same rewrite."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from types import ModuleType

VERIFIER = Path(__file__).resolve().parent.parent / "scripts" / "verifier"


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"verifier_{name}", VERIFIER / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rewrite_is_kept_only_when_it_is_no_copy_and_keeps_every_number() -> None:
    acceptable = _script("paraphrase").acceptable
    source = "当日白银期货共成交59.02万手，成交额301.18亿元。"
    assert not acceptable(source, source, "zh")
    assert not acceptable(source, "当日白银期货共成交59.02万手，成交额301亿元。", "zh")
    assert acceptable(source, "白银期货这一天的成交量为59.02万手，成交金额达301.18亿元。", "zh")
    en = "Officers said Duffy and four other men were taken to the hospital on Monday."
    assert not acceptable(en, en.replace("said", "stated"), "en")
    assert acceptable(en, "On Monday Duffy and four other men went to hospital, police said.", "en")


def test_a_chinese_denial_becomes_an_assertion() -> None:
    affirm = _script("build_training")._affirm_zh
    assert affirm("目前我国尚未出现机组需要延寿的情况。") == "目前我国已经出现机组需要延寿的情况。"
    assert affirm("他没有参加会议。") == "他有参加会议。"
    assert affirm("会议于昨天召开。") is None


def test_paraphrase_rows_pair_a_supported_rewrite_with_its_edit(tmp_path: Path) -> None:
    build = _script("build_training")
    items = [
        {"id": "uhg-1-s2", "language": "zh", "sentence": "记者获悉，我国还未遇到机组退役的情况。",
         "context": "核电机组退役要求高。记者获悉，我国还未遇到机组退役的情况。",
         "paraphrase": "记者了解到，我国尚未出现机组退役的情况。"},
        {"id": "summ9-s1", "language": "en", "sentence": "x", "context":
         "The bridge opened in 1998. It cost 40 million dollars to build.",
         "paraphrase": "Building the bridge cost 40 million dollars."},
        {"id": "summ9-s4", "language": "en", "sentence": "y", "context": "z", "paraphrase": None},
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items), "utf-8")
    rows = list(build.paraphrased(path, random.Random(0)))
    by_id = {r["id"]: r for r in rows}
    assert by_id["para-uhg-1-s2-right"]["claim_labels"] == [1]
    zh_edit = by_id["para-uhg-1-s2-negation"]
    assert zh_edit["claim_labels"] == [0] and "尚未" not in zh_edit["answer"]
    assert zh_edit["source"] == "uhgeval" and zh_edit["contexts"] == [items[0]["context"]]
    assert by_id["para-summ9-s1-right"]["source"] == "halueval_summarization"
    assert any(r["id"].startswith("para-summ9-s1-") and r["claim_labels"] == [0] for r in rows)
    assert not any("summ9-s4" in r["id"] for r in rows)  # a rejected rewrite makes no row


def test_an_embellished_twin_must_add_a_detail_its_context_lacks() -> None:
    embellished = _script("paraphrase").embellished
    context = "The bridge opened in 1998. It cost 40 million dollars to build."
    base = "Building the bridge cost 40 million dollars."
    assert embellished(base, context, "Building the bridge in Ohio cost 40 million dollars.", "en")
    assert embellished(base, context, "Building the bridge cost 40 million dollars in 1997.", "en")
    # nothing new (the year is in the context), a number dropped, or no longer one sentence
    assert not embellished(base, context, "Building the bridge cost 40 million dollars in 1998.",
                           "en")
    assert not embellished(base, context, "Building the Ohio bridge cost millions of dollars.",
                           "en")
    assert not embellished(base, context, "Building the bridge cost 40 million dollars. It is "
                                          "in Ohio.", "en")
    zh_context = "记者获悉，我国还未遇到机组退役的情况。"
    zh_base = "我国尚未出现机组退役的情况。"
    assert embellished(zh_base, zh_context, "截至2015年，我国尚未出现机组退役的情况。", "zh")
    assert not embellished(zh_base, zh_context, "记者获悉，我国尚未出现机组退役的情况。", "zh")
