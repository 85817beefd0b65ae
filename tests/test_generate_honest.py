"""Issue 52 item 4-5: the review page keeps its write button past the last decision; the closing
table fits 100 columns; --estimate counts the run's requests; the tiny judge refuses to generate
unless asked to proceed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest


@pytest.mark.browser
def test_the_review_page_writes_the_kept_set_after_the_last_decision(tmp_path: Path) -> None:
    from tests.test_label_page import TESTSET
    from tests.test_label_page_browser import (
        KEYS,
        chromium_page,
        click,
        key,
        label_server,
        problems,
        wait_for,
    )

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    decisions = testset.with_name("testset.decisions.jsonl")
    KEYS["a"] = ("KeyA", 65)
    with chromium_page() as page, label_server(testset) as (_, url):
        page.call("Page.navigate", url=url)
        page.wait_event("Page.loadEventFired")
        wait_for(page, "document.body.dataset.ready === '1'")
        for n, row in enumerate(TESTSET, 1):
            wait_for(page, f"item && item.row.id === '{row['id']}'")
            key(page, "a")
            deadline = time.monotonic() + 20
            while not decisions.exists() or len(decisions.read_text().splitlines()) < n:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        wait_for(page, "!document.getElementById('done').hidden")
        # shown: not hidden itself nor inside a hidden section, so laid out
        assert wait_for(page, "document.getElementById('write').offsetParent !== null")
        click(page, "#write")
        wait_for(page, "document.getElementById('written').textContent !== ''")
        assert not problems(page, url)
    kept = testset.with_name("testset.kept.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in kept] == [r["id"] for r in TESTSET]
