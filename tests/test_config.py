"""Settings: TOML file, flags win, bad values are one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.config import load_config
from localeval.errors import ConfigError


def test_file_then_flags(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('metrics = ["faithfulness"]\nparallel = 2\nlanguage = "zh"\n', encoding="utf-8")
    s = load_config(cfg, {"parallel": 4, "language": None})
    assert (s.metrics, s.parallel, s.language) == (["faithfulness"], 4, "zh")


def test_localeval_table_and_defaults(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[localeval]\nmax_tokens = 100\n", encoding="utf-8")
    s = load_config(cfg, {})
    assert s.max_tokens == 100 and s.profile == "small" and s.temperature == 0.0


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("parallel = 0\n", "'parallel'"),
        ("language = 'fr'\n", "'language'"),
        ("unknown_key = 1\n", "'unknown_key'"),
        ("parallel = [\n", "c.toml"),
    ],
)
def test_bad_values(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=needle):
        load_config(cfg, {})


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", {})
