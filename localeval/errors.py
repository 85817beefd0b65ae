"""One exception family. The library raises these; only the CLI turns them into one line and
an exit code."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


def first_error(exc: ValidationError, nowhere: str = "?") -> tuple[str, str]:
    """A pydantic error in one line's parts: where its first error is (the location's parts
    joined by dots; `nowhere` when it has none) and what it says."""
    err = exc.errors()[0]
    return ".".join(str(p) for p in err["loc"]) or nowhere, err["msg"]


class LocalevalError(Exception):
    """Base class: the message says what happened and what to do."""

    exit_code = 2


class ConfigError(LocalevalError):
    """A bad setting, flag or config file value."""


class DatasetError(LocalevalError):
    """The dataset cannot be read at all (per-row problems are RowProblems, not exceptions)."""


class ModelError(LocalevalError):
    """A model is missing, corrupt (sha256 mismatch) or cannot be loaded."""


class JudgeError(LocalevalError):
    """One request failed for one sample: invalid answer, max_tokens reached, prompt too long."""


class PromptTooLong(JudgeError):
    """The rendered prompt does not fit the model's context window."""

    def __init__(self, n_tokens: int, n_ctx: int, reserve: int,
                 advice: str = "raise --n-ctx or shorten the contexts") -> None:
        self.n_tokens, self.n_ctx, self.reserve = n_tokens, n_ctx, reserve
        super().__init__(
            f"prompt of {n_tokens} tokens does not fit the context window of {n_ctx} "
            f"(with {reserve} reserved for the answer); {advice}"
        )


class UsageError(LocalevalError):
    """Wrong command-line usage (unknown metric, bad gate)."""


class LabelsError(LocalevalError):
    """Human labels that cannot be used: too few, out of range, for another run."""


class OutputError(LocalevalError):
    """The --out folder or a file in it cannot be written (missing permission, disk full)."""


class RunInterrupted(LocalevalError):
    """Ctrl-C: the samples done so far are saved; `--resume` continues the run."""

    exit_code = 130

    def __init__(
        self, done: int, total: int, out_dir: Path | None, summary: dict[str, Any]
    ) -> None:
        self.done, self.total, self.out_dir, self.summary = done, total, out_dir, summary
        where = f" (saved in {out_dir})" if out_dir is not None else ""
        super().__init__(f"interrupted: {done} of {total} samples done{where}")
