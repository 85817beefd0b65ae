"""`llama_cpp.server` for the ragas side of bench_vs_ragas.py, with llama.cpp's extra buffer
types off, as localeval loads its judge (localeval/docs/engine.md: on AMX Xeons the default
weight repacking dies in `llama_decode`, and elsewhere it reads prompts slower). Run by the
ragas venv; the arguments are those of `python -m llama_cpp.server`."""

from __future__ import annotations

import llama_cpp.llama_cpp as ll
from llama_cpp.server.__main__ import main

default_params = ll.llama_model_default_params


def model_params() -> ll.llama_model_params:
    params = default_params()
    params.use_extra_bufts = False
    return params


ll.llama_model_default_params = model_params  # what llama_cpp.Llama reads when it loads

if __name__ == "__main__":
    main()
