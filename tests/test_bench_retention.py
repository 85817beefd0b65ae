"""scripts/bench/bench_retention.py: the variants' requests and the mixes, without a judge."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench" / "bench_retention.py"


def load():
    spec = importlib.util.spec_from_file_location("bench_retention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_retention"] = module
    spec.loader.exec_module(module)
    return module


def test_a_mix_combines_its_two_variants_records():
    b = load()
    records = [{"variant": "fact_bears", "id": "c", "turn": 2, "p": 0.8, "prompt_tokens": 80,
                "seconds": 1.0},
               {"variant": "fact_keeps", "id": "c", "turn": 2, "p": 0.25, "prompt_tokens": 60,
                "seconds": 0.5},
               {"variant": "user_bears", "id": "c", "turn": 2, "p": None, "prompt_tokens": 90,
                "seconds": 1.0}]
    mixed = b.mixed(records)
    assert mixed == [{"variant": "fact_mix", "id": "c", "turn": 2, "p": 0.4,
                      "prompt_tokens": 140, "seconds": 1.5}]


def test_yes_no_variants_ask_the_words_of_the_rows_language():
    b = load()
    for lang, words in (("en", ["Yes", "No"]), ("zh", ["是", "否"])):
        req = b.request("fact_conflict", lang, "", "Have some wine.", 160,
                        fact="I don't drink alcohol.")
        assert req.continuations == words and req.max_tokens == 1
        assert "I don't drink alcohol." in req.messages[1]["content"]
        reply = SimpleNamespace(choice_probs={words[0]: 0.7, words[1]: 0.3})
        assert abs(b.p_retained("fact_conflict", reply, lang) - 0.3) < 1e-9
        assert abs(b.p_retained("fact_respect", reply, lang) - 0.7) < 1e-9


def test_user_variants_show_every_earlier_user_message():
    b = load()
    row = {"id": "x-kept", "language": "en", "labels": {"knowledge_retention": 1.0},
           "turns": [{"role": "user", "content": "I am vegetarian. Who wrote Hamlet?"},
                     {"role": "assistant", "content": "Shakespeare."},
                     {"role": "user", "content": "A pasta dish?"},
                     {"role": "assistant", "content": "Pasta primavera."}]}
    last = b.turns_to_judge(row)[-1]
    assert last["fact"] == "I am vegetarian."
    assert last["user_said"] == "I am vegetarian. Who wrote Hamlet? A pasta dish?"
    req = b.request("user_keeps", "en", last["history"], last["reply"], 160, last["fact"],
                    last["user_said"])
    assert "The user said: I am vegetarian. Who wrote Hamlet? A pasta dish?" in \
        req.messages[1]["content"]
