"""`generate`: a test set (rows `run` reads) and its corpus from the user's own documents."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from localeval.cli.common import say, to_json
from localeval.errors import ConfigError, UsageError
from localeval.safe import terminal_safe

if TYPE_CHECKING:
    from localeval.config import Settings

SETTING_FLAGS = ("profile", "judge", "judge_model", "embedder", "fake_answers", "language",
                 "n_ctx", "n_threads", "n_gpu_layers", "parallel", "max_tokens", "cache",
                 "no_cache", "support_threshold")


def add_parser(sub: argparse._SubParsersAction) -> None:
    from localeval.generate import KINDS

    gen = sub.add_parser("generate", help="generate a test set (questions, reference answers, "
                                          "expected chunk ids) from your own documents")
    gen.add_argument("docs", nargs="+", type=Path,
                     help=".txt, .md, .html or .pdf files or folders, or a JSONL of "
                          '{"id", "text"} chunks')
    gen.add_argument("--out", type=Path, help="the test set (JSONL); the corpus, the dropped "
                     "candidates and the report are written beside it (required, except with "
                     "--estimate)")
    gen.add_argument("--overwrite", action="store_true",
                     help="replace the test set at --out (refused without it; its review's "
                          "decisions then apply only to rows that are unchanged)")
    gen.add_argument("--n", type=int, default=20, help="questions per kind, at most (default 20)")
    gen.add_argument("--kinds", default=",".join(KINDS),
                     help=f"comma-separated, of {', '.join(KINDS)} (default all)")
    gen.add_argument("--seed", type=int, default=0, help="which chunks and pairs are asked "
                     "about (default 0): the same documents, seed and settings, the same bytes")
    gen.add_argument("--per-chunk", type=int, default=2,
                     help="sentences of a chunk asked about, at most (default 2; a chunk is in "
                          "twice as many pairs at most); drafting stops once --n of each kind is "
                          "kept")
    gen.add_argument("--max-drafts", type=int, help="stop drafting past this many drafts "
                     "(eight at a time), kept or not: a generation sized to a budget")
    gen.add_argument("--chunk-tokens", type=int, default=256, help="largest chunk (default 256)")
    gen.add_argument("--duplicate-cosine", type=float, default=0.92,
                     help="a question this close to a kept one is a near-duplicate")
    gen.add_argument("--language", choices=["auto", "zh", "en"])
    gen.add_argument("--profile", choices=["tiny", "small", "standard"])
    gen.add_argument("--judge", choices=["llama", "fake"], help=argparse.SUPPRESS)
    gen.add_argument("--fake-answers", type=Path, help=argparse.SUPPRESS)
    gen.add_argument("--judge-model", type=Path, help="GGUF file instead of the profile's judge")
    gen.add_argument("--embedder", type=Path, help="sentence-transformers folder")
    gen.add_argument("--n-ctx", type=int)
    gen.add_argument("--threads", dest="n_threads", type=int)
    gen.add_argument("--n-gpu-layers", type=int)
    gen.add_argument("--parallel", type=int)
    gen.add_argument("--max-tokens", type=int)
    gen.add_argument("--support-threshold", type=float, metavar="P")
    gen.add_argument("--cache", type=Path)
    gen.add_argument("--no-cache", action="store_true", default=None)
    gen.add_argument("--config", type=Path, help="TOML file with settings (flags win)")
    gen.add_argument("--quiet", action="store_true", help="no progress bar or table")
    gen.add_argument("--estimate", action="store_true",
                     help="print the judge requests and tokens the generation would take, "
                          "without loading the judge")
    gen.add_argument("--json", action="store_true", help="with --estimate: as JSON")
    gen.add_argument("--allow-weak-judge", action="store_true",
                     help="generate with the tiny profile's 0.5B judge anyway (refused without "
                          "it: too many of its rows are wrong)")
    gen.set_defaults(func=cmd_generate)


WEAK_JUDGE_MEASURED = ("4 of 7 rows wrong, read by hand, in issue 52's measurement: --n 3 on "
                       "three small documents")
"""What the 0.5B judge's test sets were found to be, read by hand (docs/generate.md)."""


def weak_judge(settings: Settings) -> bool:
    """The judge is the tiny profile's 0.5B (no --judge-model instead of it)."""
    return settings.profile == "tiny" and settings.judge_model is None


def cmd_generate(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from localeval.config import load_config
    from localeval.errors import first_error
    from localeval.generate.pipeline import GenerateOptions, generate

    settings = load_config(args.config, {k: getattr(args, k, None) for k in SETTING_FLAGS})
    try:
        options = GenerateOptions(n=args.n, kinds=args.kinds, seed=args.seed,
                                  chunk_tokens=args.chunk_tokens, per_chunk=args.per_chunk,
                                  max_drafts=args.max_drafts,
                                  duplicate_cosine=args.duplicate_cosine)
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise ConfigError(f"generate --{where.replace('_', '-')}: {msg}") from None
    if args.estimate:
        from localeval.estimate.table import table
        from localeval.generate.estimate import estimate

        found = estimate(args.docs, settings, options, log=say)
        print(to_json(found) if args.json else table(found))
        return 0
    if args.out is None:
        raise UsageError("generate: the following arguments are required: --out")
    if weak_judge(settings) and not args.allow_weak_judge:
        raise UsageError(f"generate --profile tiny: the 0.5B judge is too weak to write a test "
                         f"set ({WEAK_JUDGE_MEASURED}); use --profile small, or give "
                         "--allow-weak-judge to proceed")
    result = generate(args.docs, args.out, settings, options, progress=not args.quiet, log=say,
                      overwrite=args.overwrite)
    if not args.quiet:
        print(report_table(result.report))
        print(terminal_safe(f"test set: {args.out}  corpus: "
                            f"{args.out.with_name(args.out.stem + '.corpus.jsonl')}"))
    if not result.rows:
        failures = result.report.get("judge", {}).get("failures", 0)
        why = (f"{failures} judge request(s) failed (see the lines above)" if failures else
               "every candidate was dropped (the report beside the test set says by which filter)")
        say(f"generate: no question kept: {why}")
        return 1
    return 0


WIDTH = 100  # the closing table's widest line


_SHORT = {"unanswerable": "unans", "colloquial": "colloq"}


def _width(text: str) -> int:
    """Columns the text takes on a terminal (a Chinese character: two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _fit(text: str, width: int) -> str:
    """The text cut in its middle to fit `width` columns, padded to them."""
    if _width(text) > width:
        head, tail = "", ""
        for ch in text:
            if _width(head + ch) > (width - 1) // 2:
                break
            head += ch
        for ch in reversed(text):
            if _width(head + "…" + ch + tail) > width:
                break
            tail = ch + tail
        text = head + "…" + tail
    return text + " " * (width - _width(text))


def coverage_table(coverage: list[dict]) -> list[str]:
    """Per document and language: its chunks, per kind the rows kept of those planned
    (coverage.quotas), and the candidates asked, kept and dropped; at most WIDTH columns (a
    long name cut in its middle)."""
    if not coverage:
        return []
    from localeval.generate import KINDS

    kinds = [k for k in KINDS if any(k in line["kinds"] for line in coverage)]
    name_w = WIDTH - 5 - 7 - 8 * len(kinds) - 7 - 6 - 8
    head = (f"{'document':<{name_w}}{'lang':>5}{'chunks':>7}"
            + "".join(f"{_SHORT.get(k, k)[:7]:>8}" for k in kinds)
            + f"{'asked':>7}{'kept':>6}{'dropped':>8}")
    lines = ["coverage (kept/planned per kind)", head]
    for line in coverage:
        cells = [line["kinds"].get(k) for k in kinds]
        asked = sum(c["candidates"] for c in cells if c)
        kept = sum(c["kept"] for c in cells if c)
        lines.append(_fit(line["document"], name_w - 1) + " "
                     + f"{line['language']:>5}{line['chunks']:>7}"
                     + "".join(f"{(str(c['kept']) + '/' + str(c['planned'])) if c else '-':>8}"
                               for c in cells)
                     + f"{asked:>7}{kept:>6}{asked - kept:>8}")
    return lines


def report_table(report: dict) -> str:
    """Per kind: candidates, kept, retyped, and the filters that dropped any (wrapped under
    "dropped by"), at most WIDTH columns; then the run's time and rows per hour."""
    import textwrap

    from localeval.generate.filters import FILTERS

    head = f"{'kind':<12}{'candidates':>11}{'kept':>6}{'retyped':>9}  "
    lines = [head + "dropped by"]
    for kind, counts in report["by_kind"].items():
        line = (f"{kind[:12]:<12}{counts.get('candidates', 0):>11}{counts.get('kept', 0):>6}"
                f"{counts.get('retyped', 0):>9}  ")
        items = [f"{f} {counts[f]}" for f in FILTERS if counts.get(f)] or ["-"]
        for n, item in enumerate(items):  # an item is never split across lines
            item += "," if n < len(items) - 1 else ""
            if len(line) > len(head) and len(line) + 1 + len(item) > WIDTH:
                lines.append(line)
                line = " " * len(head)
            line += ("" if line.endswith("  ") else " ") + item
        lines.append(line)
    lines += coverage_table(report.get("coverage") or [])
    kept, seconds = report["kept"], report.get("seconds")
    per = report.get("seconds_per_kept_question")
    line = f"{kept} rows kept in {seconds} s" + (f" ({per} s per kept row" if per else "")
    if kept and seconds:
        line += (", " if per else " (") + f"{kept * 3600 / seconds:,.0f} rows per hour)"
    elif per:
        line += ")"
    lines += textwrap.wrap(line, WIDTH)
    return "\n".join(lines)
