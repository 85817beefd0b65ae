"""Settings retired by issue 28 (one verdict path) say so in one line, from a flag, a config file
or the Python API; nothing runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from localeval.config import RETIRED, load_config
from localeval.errors import ConfigError


@pytest.mark.parametrize(("key", "value"), [("verdict_style", '"evidence"'), ("contrast", "true"),
                                            ("contrast_style", '"choice"')])
def test_a_config_file_naming_a_retired_setting_gets_one_line(tmp_path: Path, key: str,
                                                              value: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f"profile = \"tiny\"\n{key} = {value}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(config, {})
    message = str(err.value)
    assert "\n" not in message and f"'{key}'" in message and str(config) in message
    assert "was retired" in message and "remove it" in message


def test_the_api_names_the_retired_setting() -> None:
    import localeval

    with pytest.raises(ConfigError, match="'contrast' was retired"):
        localeval.evaluate([{"id": 1, "answer": "a", "contexts": ["c"]}], contrast=True)


@pytest.mark.parametrize("flags", [["--contrast"], ["--contrast-style", "choice"],
                                   ["--verdict-style", "evidence"], ["--verdict-style=reason"]])
def test_a_retired_flag_gets_one_line_and_status_2(tmp_path: Path, flags: list[str]) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": 1, "answer": "a", "contexts": ["c"]}\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "localeval", "run", str(data), "--out",
                           str(tmp_path / "out"), *flags], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"localeval: error: {flags[0].split('=')[0]} "
                                                   "was retired")
    assert not (tmp_path / "out").exists()


def test_every_retired_setting_is_gone_from_settings() -> None:
    from localeval.config import Settings

    assert not set(RETIRED) & set(Settings.model_fields)
