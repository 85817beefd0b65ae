"""Command line: `python -m localeval run|report|compare|metrics|models|retrieval|meta-eval`.

The library raises LocalevalError; only this package turns it into one line on stderr and an exit
status (0 ok, 1 a gate failed or `calibrate` refused a worse τ, 2 usage or input error, 3 a run
scored nothing, 130 interrupted, 128 + N stopped by signal N). `--debug` shows tracebacks.
Modules: `parser` (the options), `run` (run), `estimate` (run --estimate), `report` (report,
compare), `catalog` (metrics, models), `meta_eval`, `retrieval`, `common` (what they print).
"""

from __future__ import annotations

import os
import shlex
import sys

from localeval.cli.common import say
from localeval.cli.parser import build_parser
from localeval.errors import LocalevalError
from localeval.safe import terminal_safe

__all__ = ["build_parser", "main"]


def main(argv: list[str] | None = None) -> int:
    from localeval.errors import RunInterrupted

    argv = sys.argv[1:] if argv is None else argv
    end = argv.index("--") if "--" in argv else len(argv)
    debug = "--debug" in argv[:end]  # anywhere before "--", before or after the subcommand
    argv = [a for a in argv[:end] if a != "--debug"] + argv[end:]
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    args.debug = debug
    if args.models_dir is not None:
        os.environ["LOCALEVAL_MODELS_DIR"] = str(args.models_dir.expanduser().resolve())
    try:
        return int(args.func(args))
    except RunInterrupted as exc:  # Ctrl-C during run: what is done is saved
        words = [w for w in argv if w != "--overwrite"]
        again = words if "--resume" in words else [*words, "--resume"]
        print("\n" + terminal_safe(f"{exc}; resume with: python -m localeval {shlex.join(again)}"),
              file=sys.stderr)
        return exc.exit_code
    except LocalevalError as exc:
        if args.debug:
            raise
        say(f"localeval: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt as exc:  # also SIGTERM/SIGHUP during a run (runner.Stopped)
        signum = getattr(exc, "signum", None)
        print(f"localeval: {'stopped by ' + str(exc) if signum else 'interrupted'}",
              file=sys.stderr)
        return 128 + signum if signum else 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
