"""The localeval modules one command imports, as `python -X importtime` lists them.

    python research/house/route.py OUT.txt -- run DATA --out DIR --metrics faithfulness ...

Runs `python -m localeval ARGS` (through runpy, so `-X importtime` sees every import statement
the command runs, those inside functions too) in a child process, and writes the sorted names of
the distinct `localeval` modules it imported to OUT.txt; prints their count and the command's
exit status. `-X importtime` does not see a module imported by `importlib.import_module` (it
times the import statement only), so the child also writes the `localeval` modules in
`sys.modules` at its exit: OUT.txt with `.sys_modules` before its suffix, counted too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = """
import atexit, runpy, sys
def held():
    names = sorted(n for n in sys.modules if n == "localeval" or n.startswith("localeval."))
    print("sys.modules:", " ".join(names), file=sys.stderr)
atexit.register(held)
sys.argv = ["localeval", *sys.argv[1:]]
runpy.run_module("localeval", run_name="__main__")
"""


def main() -> int:
    out, args = Path(sys.argv[1]), sys.argv[sys.argv.index("--") + 1:]
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", CHILD, *args],
                          stderr=subprocess.PIPE, text=True)
    names, held = set(), []
    for line in done.stderr.splitlines():
        if line.startswith("sys.modules:"):
            held = line.split()[1:]
        elif line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name == "localeval" or name.startswith("localeval."):
                names.add(name)
        elif not line.startswith("import time:"):
            print(line, file=sys.stderr)
    out.write_text("".join(f"{n}\n" for n in sorted(names)), encoding="utf-8")
    out.with_suffix(".sys_modules" + out.suffix).write_text(
        "".join(f"{n}\n" for n in held), encoding="utf-8")
    print(f"{len(names)} localeval modules in -X importtime, {len(held)} in sys.modules; "
          f"exit status {done.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
