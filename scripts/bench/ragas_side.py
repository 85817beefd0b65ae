"""The ragas side of scripts/bench/bench_vs_ragas.py: run by the ragas venv's python, not by
localeval's (it imports ragas and LangChain only).

    RAGAS_PYTHON ragas_side.py ROWS.json BASE_URL EMBEDDER_DIR OUT.json [METRICS]

Scores each row of ROWS.json (id, question, answer, contexts) with ragas' Faithfulness and/or
ResponseRelevancy (METRICS: comma-separated localeval names, faithfulness and answer_relevance
by default; strictness 3; `bypass_n=True`, the server ignores n > 1) against the
OpenAI-compatible server at BASE_URL, one evaluate() per row so that each row's seconds are its
own, and writes per row: seconds, scores (None for NaN), the chat calls the client made, the
prompt tokens the server reported for them, its output-repair calls and ragas' "failed to parse
output" warnings.
"""

import json
import logging
import math
import sys
import time
import warnings

import httpx
from langchain_community.embeddings import HuggingFaceEmbeddings
from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, SingleTurnSample, evaluate
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness, ResponseRelevancy
from ragas.run_config import RunConfig

REPAIR = "The output string did not satisfy the constraints"
RAGAS_NAME = {"faithfulness": "faithfulness", "answer_relevance": "answer_relevancy"}
"""localeval's metric name → the column of ragas' result."""


class Calls(BaseCallbackHandler):
    """The chat calls of one row: whether each was an output repair, and whether it failed."""

    def __init__(self) -> None:
        self.calls: dict = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        text = " ".join(str(m.content) for batch in messages for m in batch)
        self.calls[run_id] = {"repair": REPAIR in text, "error": None, "prompt_tokens": 0}

    def on_llm_end(self, response, *, run_id, **kwargs):
        usage = (response.llm_output or {}).get("token_usage") or {}
        self.calls.setdefault(run_id, {"repair": False, "error": None})["prompt_tokens"] = int(
            usage.get("prompt_tokens") or 0)

    def on_llm_error(self, error, *, run_id, **kwargs):
        self.calls.setdefault(run_id, {"repair": False})["error"] = str(error)[:300]


class ParseWarnings(logging.Handler):
    """ragas' "failed to parse output" warnings of one row."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "failed to parse output" in record.getMessage()


def main() -> None:
    rows_file, base_url, embedder, out = sys.argv[1:5]
    names = (sys.argv[5] if len(sys.argv) > 5 else "faithfulness,answer_relevance").split(",")
    scores_of = [RAGAS_NAME[n] for n in names]
    warnings.filterwarnings("ignore")
    with open(rows_file, encoding="utf-8") as f:
        rows = json.load(f)
    parse = ParseWarnings()
    logging.getLogger("ragas").addHandler(parse)
    embeddings = LangchainEmbeddingsWrapper(HuggingFaceEmbeddings(model_name=embedder))
    results = []
    for r in rows:
        calls = Calls()
        parse.count = 0
        # a new HTTP client per evaluate(): each evaluate() runs its own event loop, and the
        # async client langchain-openai caches for a base URL stays bound to the first loop
        llm = LangchainLLMWrapper(ChatOpenAI(
            base_url=base_url, api_key="local", model="judge", temperature=0, max_tokens=1024,
            timeout=1800, http_async_client=httpx.AsyncClient(timeout=1800),
            callbacks=[calls]), bypass_n=True)
        data = EvaluationDataset(samples=[SingleTurnSample(
            user_input=r["question"], response=r["answer"], retrieved_contexts=r["contexts"])])
        started = time.perf_counter()
        result = evaluate(data, metrics=[{"faithfulness": Faithfulness(),
                                         "answer_relevancy": ResponseRelevancy(strictness=3)}[k]
                                        for k in scores_of],
                          llm=llm, embeddings=embeddings,
                          run_config=RunConfig(max_workers=1, timeout=1800, max_retries=1),
                          raise_exceptions=False, show_progress=False)
        seconds = time.perf_counter() - started
        df = result.to_pandas()
        scores = {k: float(df[k][0]) if k in df else math.nan for k in scores_of}
        results.append({
            "id": r["id"], "seconds": round(seconds, 2),
            "scores": {k: None if math.isnan(v) else round(v, 4) for k, v in scores.items()},
            "judge_calls": len(calls.calls),
            "prompt_tokens": sum(c.get("prompt_tokens", 0) for c in calls.calls.values()),
            "repair_calls": sum(c["repair"] for c in calls.calls.values()),
            "failed_calls": sum(bool(c["error"]) for c in calls.calls.values()),
            "parse_failures": parse.count})
    with open(out, "w", encoding="utf-8") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
