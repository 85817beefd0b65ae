"""Issue 50: on the labelling page a person marks each claim's diagnosis class (class labels,
labels/classes.py): the views `diagnosis.answer_claims` and `diagnosis.truth_claims`, each claim
with the judge's class, the person's class written bound to the sample's input_hash and the
claim's text, the random order in sequence, the current interval of the side's score, and the
file the estimate reads (PPI of every diagnosis mean of the side). Over HTTP here; in Chromium
at the end (skipped without it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.labels.classes import ANSWER, ANSWER_CLAIMS, TRUTH, TRUTH_CLAIMS
from localeval.labels.store import LABELS_FILE, read_labels
from tests.test_diagnosis import ROW, OracleJudge
from tests.test_label_page import open_run, serving
from tests.test_labels_classes import JUDGE_ANSWER, JUDGE_TRUTH, SHORT

DIAGNOSIS = ["claim_recall", "context_utilization", "noise_sensitivity", "hallucination",
             "self_knowledge"]


def diagnosis_run(tmp_path: Path, n: int = 4, *, short: bool = True) -> Path:
    """n rows of the oracle's ROW, the odd ones with its five-claim answer, the even ones with
    one supported claim (without `short`: every one with the five claims); the dataset written
    to a file, so the page shows the contexts."""
    from localeval.config import Settings
    from localeval.models.embed import HashEmbedder
    from localeval.runner import run

    data = tmp_path / "data.jsonl"
    rows = [ROW | {"id": f"r{i}", "answer": ROW["answer"] if i % 2 or not short else SHORT}
            for i in range(n)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run(data, tmp_path / "run", Settings(no_cache=True, metrics=DIAGNOSIS),
        judge=OracleJudge(), embedder=HashEmbedder())
    return tmp_path / "run"


def _mark(c: Any, sid: str, claim: int, label: Any, metric: str = ANSWER_CLAIMS,
          status: int = 200, **seen: Any) -> Any:
    return c.post("/api/mark", {"metric": metric, "order": "random", "id": sid,
                                "claim": claim, "label": label, **seen}, status)


def test_a_claim_s_class_is_marked_and_bound_to_what_was_shown(tmp_path: Path) -> None:
    run_dir = diagnosis_run(tmp_path)
    with serving(open_run(run_dir)) as c:
        state = c.get(f"/api/state?metric={ANSWER_CLAIMS}")
        names = [m["name"] for m in state["metrics"]]
        assert names[-2:] == [ANSWER_CLAIMS, TRUTH_CLAIMS]
        assert state["classes"] == list(ANSWER) and state["claims"] is True
        assert state["score_key"] == "hallucination" and state["total"] == 4
        truth_state = c.get(f"/api/state?metric={TRUTH_CLAIMS}")
        assert truth_state["classes"] == list(TRUTH) and truth_state["score_key"] == "claim_recall"
        order = [c.item(p, "informative", ANSWER_CLAIMS)["id"] for p in range(4)]
        first = c.item(0, "random", ANSWER_CLAIMS)
        long = first if first["id"] in ("r1", "r3") else None
        # the judge's class beside each claim; the score shown is the side's (hallucination)
        for sid in order:
            shown = c.item(order.index(sid), "informative", ANSWER_CLAIMS)
            want = JUDGE_ANSWER if sid in ("r1", "r3") else ["supported"]
            assert [x["class"] for x in shown["claims"]] == want
            assert shown["score"] == (0.2 if sid in ("r1", "r3") else 0.0)
            assert shown["contexts"] is not None
        # a support label, a truth class on the answer side, and a class without a claim: no
        _mark(c, first["id"], 0, 1, status=400)
        _mark(c, first["id"], 0, "used", status=400)
        _mark(c, first["id"], None, "hallucination", status=400)
        # a mark the page made on a claim text that is no longer the run's: refused
        _mark(c, first["id"], 0, "supported", status=400, statement="Another claim.")
        for i, _ in enumerate(first["claims"]):
            _mark(c, first["id"], i, None if i == 1 else "supported",
                  input_hash=first["input_hash"], statement=first["claims"][i]["text"])
        after = c.item(0, "random", ANSWER_CLAIMS)
        assert after["status"] == "random" and after["marks"]["0"]["class"] == "supported"
        if long is not None:
            assert after["marks"]["1"] == {"label": None, "note": None, "order": "random",
                                           "class": None}
    read = read_labels(run_dir / LABELS_FILE)
    rows = sorted(read.labels.values(), key=lambda x: x.claim or 0)
    assert all(r.metric == ANSWER_CLAIMS and r.input_hash and r.statement for r in rows)
    assert rows[0].klass == "supported" and rows[0].label == 1.0
    assert rows[0].statement == first["claims"][0]["text"]
    raw = [json.loads(x) for x in (run_dir / LABELS_FILE).read_text().splitlines()]
    assert raw[0]["class"] == "supported" and raw[0]["label"] == 1


def _label_side(c: Any, metric: str, classes_of: Any, n: int) -> None:
    """Mark, in the random order, the first n samples' claims with `classes_of(id)`."""
    for pos in range(n):
        shown = c.item(pos, "random", metric)
        for i, cls in enumerate(classes_of(shown["id"])):
            _mark(c, shown["id"], i, cls, metric=metric)


def person(sid: str) -> list[str]:
    """The person on the answer's claims: as the judge, but r1's Louvre claim is right."""
    if sid == "r1":
        return ["supported", "noise_irrelevant", "self_knowledge", "self_knowledge",
                "noise_relevant"]
    return JUDGE_ANSWER if sid in ("r3",) else ["supported"]


def test_the_interval_and_the_estimate_read_the_person_s_classes(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = diagnosis_run(tmp_path)
    with serving(open_run(run_dir)) as c:
        _label_side(c, ANSWER_CLAIMS, person, 4)
        _label_side(c, TRUTH_CLAIMS, lambda sid: JUDGE_TRUTH if sid != "r0" else
                    ["used", "used", "not_retrieved", "unused"], 4)
        iv = c.get(f"/api/state?metric={ANSWER_CLAIMS}")["interval"]
        truth_iv = c.get(f"/api/state?metric={TRUTH_CLAIMS}")["interval"]
    # every sample labelled: the labels' mean. hallucination: r3 1/5, the rest 0
    assert iv["n_labels"] == 4 and iv["mean"] == pytest.approx(0.2 / 4)
    assert iv["judge_mean"] == pytest.approx(0.4 / 4) and iv["unit"] == "rows"
    assert truth_iv["mean"] == pytest.approx((0.75 + 0.5 * 3) / 4)  # claim_recall
    est = estimate_run(run_dir)
    assert est.estimates["hallucination"].mean == pytest.approx(iv["mean"])
    assert est.estimates["self_knowledge"].mean == pytest.approx((0.4 + 0.2) / 4)
    assert est.estimates["claim_recall"].mean == pytest.approx(truth_iv["mean"])
    assert est.estimates["context_utilization"].mean == pytest.approx((2 / 3 + 0.5 * 3) / 4)
    assert est.estimates["noise_sensitivity.relevant"].n_labels == 4


def test_the_random_order_of_classes_is_labelled_in_sequence(tmp_path: Path) -> None:
    run_dir = diagnosis_run(tmp_path)
    with serving(open_run(run_dir)) as c:
        second = c.item(0, "random", ANSWER_CLAIMS)
        got, _ = c.raw(f"/api/item?metric={ANSWER_CLAIMS}&order=random&pos=1")
        assert got == 400  # the first one is not labelled yet
        for i, _ in enumerate(second["claims"]):
            _mark(c, second["id"], i, "hallucination")
        assert c.get(f"/api/state?metric={ANSWER_CLAIMS}")["frontier"] == 1
        assert c.item(1, "random", ANSWER_CLAIMS)["id"] != second["id"]


# ---- in Chromium ------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_page_marks_classes_by_key_and_click(tmp_path: Path) -> None:
    from tests.test_browser import chromium_page
    from tests.test_label_page_browser import (
        click,
        key,
        label_server,
        open_at,
        screenshot,
        wait_for,
    )

    run_dir = diagnosis_run(tmp_path, 2, short=False)  # five claims each
    with chromium_page() as page, label_server(run_dir, "--metric", ANSWER_CLAIMS) as (_, url):
        open_at(page, url, 1300)
        state = page.evaluate("({classes: state.classes, metric: state.metric, "
                              "keyline: document.getElementById('keyline').textContent})")
        assert state["metric"] == ANSWER_CLAIMS and state["classes"] == list(ANSWER)
        assert "5 hallucination" in state["keyline"]
        assert "1, 2, …" in page.evaluate("document.getElementById('keys').textContent")
        chips = page.evaluate("[...document.querySelectorAll('#claims li .dclass')]"
                              ".map(c => c.dataset.class)")
        n = len(chips)
        buttons = page.evaluate("[...document.querySelectorAll('#claims li')][0]"
                                ".querySelectorAll('button.mark').length")
        assert buttons == len(ANSWER) + 1  # each class, and unsure
        assert not page.evaluate("document.querySelector('#claims li .verdict .ok, "
                                 "#claims li .verdict .bad')")  # no support verdict
        assert n == 5 and chips == JUDGE_ANSWER
        assert page.evaluate("document.getElementById('judge').textContent").startswith(
            "judge hallucination score 0.200")
        sid = page.evaluate("item.id")
        key_of = {c: (f"Digit{k + 1}", 49 + k) for k, c in enumerate(ANSWER)}
        for i in range(n):
            if i == 0:  # a click on the first claim's hallucination button
                click(page, '#claims li[data-claim="0"] button.mark.d-hallucination')
            else:
                code, vk = key_of["self_knowledge"]
                for kind in ("keyDown", "keyUp"):
                    page.call("Input.dispatchKeyEvent", type=kind, key=str(vk - 48), code=code,
                              text=str(vk - 48) if kind == "keyDown" else "",
                              windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
            wait_for(page, f"item.marks['{i}'] !== undefined")
        wait_for(page, "item.status === 'random'")
        screenshot(page, 1300, tmp_path / "label-classes-1300.png")
        screenshot(page, 800, tmp_path / "label-classes-800.png")
        classes = page.evaluate("[...document.querySelectorAll('#claims li')]"
                                ".map(li => li.className)")
        assert "m-class d-hallucination" in classes[0]
        chosen = page.evaluate("document.querySelector('#claims li[data-claim=\"0\"] "
                               "button.mark.chosen').dataset.label")
        assert json.loads(chosen) == "hallucination"
        key(page, "Enter")  # the next sample opens
        wait_for(page, f"item.id !== {sid!r}")
        errors = [e for e in page.events if e.get("method") == "Runtime.exceptionThrown"]
        assert not errors, errors
    read = read_labels(run_dir / LABELS_FILE)
    got = {k[2]: v.klass for k, v in read.labels.items()}
    assert got == {0: "hallucination", **{i: "self_knowledge" for i in range(1, n)}}
    assert all(v.statement and v.input_hash for v in read.labels.values())
