"""A metric's options: a typed model declared with `@metric(options=...)`, set under
`[metric_options.<name>]` in the config or with `--metric-option name.key=value`, checked at run
start (one line naming the metric and the option), read by the metric as `ctx.options`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from localeval.cli import build_parser
from localeval.config import Settings, load_config
from localeval.data.dataset import Sample
from localeval.errors import ConfigError
from localeval.metrics import REGISTRY, MetricContext, MetricResult
from localeval.metrics.base import metric
from localeval.models.preflight import check_metric_options
from tests.conftest import run_fake

NAME = "probe_options"


class ProbeOptions(BaseModel):
    limit: int = Field(3, ge=1)
    label: str = "x"


@pytest.fixture
def probe() -> Iterator[str]:
    """A metric with options, registered for one test: its score is its `limit` option."""

    @metric(NAME, requires=("answer",), description="test: scores its own option",
            options=ProbeOptions)
    async def probe_options(sample: Sample, ctx: MetricContext) -> MetricResult:
        options: ProbeOptions = ctx.options
        assert isinstance(options, ProbeOptions)
        return MetricResult(scores={NAME: float(options.limit)}, details={"label": options.label})

    yield NAME
    REGISTRY.pop(NAME)


def test_no_options_leave_the_dumped_settings_as_they_were() -> None:
    assert "metric_options" not in Settings().model_dump()
    assert "metric_options" not in json.loads(Settings().model_dump_json())
    set_ = Settings(metric_options={NAME: {"limit": 5}})
    assert set_.model_dump()["metric_options"] == {NAME: {"limit": 5}}


def test_the_metric_reads_its_typed_options(probe: str) -> None:
    rows = [{"id": "a", "answer": "yes"}]
    outcome, _ = run_fake(rows, [], metrics=[probe])
    assert outcome.records[0].scores[probe] == 3.0  # the default
    outcome, _ = run_fake(rows, [], metrics=[probe],
                          metric_options={probe: {"limit": "7", "label": "y"}})
    record = outcome.records[0]
    assert record.scores[probe] == 7.0 and record.details[probe] == {"label": "y"}


@pytest.mark.parametrize(("options", "message"), [
    ({"probe_optons": {"limit": 2}},
     "[metric_options.probe_optons]: unknown metric 'probe_optons'; did you mean 'probe_options'?"),
    ({"faithfulness": {"limit": 2}},
     "[metric_options.faithfulness]: metric faithfulness takes no options (given: limit)"),
    ({NAME: {"limt": 2}},
     "[metric_options.probe_options]: metric probe_options has no option 'limt'; did you mean "
     "'limit'? (its options: limit, label)"),
    ({NAME: {"limit": 0}},
     "[metric_options.probe_options]: metric probe_options option 'limit': Input should be "
     "greater than or equal to 1"),
])
def test_a_wrong_option_is_one_line_naming_metric_and_option(
        probe: str, options: dict[str, dict[str, object]], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_metric_options(Settings(metric_options=options))
    assert str(caught.value) == message
    with pytest.raises(ConfigError, match="metric_options"):  # at run start, before any sample
        run_fake([{"id": "a", "answer": "yes"}], [], metrics=[probe], metric_options=options)


def test_config_table_and_flags_merge(probe: str, tmp_path: Path) -> None:
    config = tmp_path / "localeval.toml"
    config.write_text(f'metrics = ["{probe}"]\n\n[metric_options.{probe}]\nlimit = 4\n'
                      'label = "from the file"\n', encoding="utf-8")
    args = build_parser().parse_args([
        "run", "data.jsonl", "--out", "out", "--metric-option", f"{probe}.label=flag",
        "--metric-option", "other.flag=true", "--metric-option", "other.ks=[1, 2]"])
    assert args.metric_options == {probe: {"label": "flag"}, "other": {"flag": True,
                                                                        "ks": [1, 2]}}
    settings = load_config(config, {"metric_options": {probe: {"label": "flag"}}})
    assert settings.metric_options == {probe: {"limit": 4, "label": "flag"}}
    assert load_config(config, {}).metric_options == {probe: {"limit": 4,
                                                              "label": "from the file"}}


def test_the_cli_says_a_wrong_option_in_one_line(
        probe: str, tmp_path: Path, fake_cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "a", "answer": "yes"}) + "\n", encoding="utf-8")
    code = fake_cli(data, [], tmp_path / "out", "--metric-option", f"{probe}.limit=zero",
                    metrics=probe)
    err = capsys.readouterr().err.strip()
    assert code != 0 and "\n" not in err, err
    assert err == ("localeval: error: [metric_options.probe_options]: metric probe_options option "
                   "'limit': Input should be a valid integer, unable to parse string as an integer")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "d", "--out", "o", "--metric-option", "limit=3"])
    assert "expected NAME.KEY=VALUE" in capsys.readouterr().err


def test_the_metrics_command_lists_the_options(probe: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main

    assert main(["metrics"]) == 0
    assert "options [metric_options.probe_options]: limit=3, label='x'" in capsys.readouterr().out


def test_a_metric_registered_with_default_false_runs_only_when_named(
        capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main
    from localeval.metrics import resolve

    @metric("probe_named_only", requires=("answer",), description="test", default=False)
    async def probe_named_only(sample: Sample, ctx: MetricContext) -> MetricResult:
        return MetricResult(scores={"probe_named_only": 1.0})

    try:
        assert "probe_named_only" not in [m.name for m in resolve(None)]
        assert [m.name for m in resolve(["probe_named_only"])] == ["probe_named_only"]
        outcome, _ = run_fake([{"id": "a", "answer": "yes"}], [], metrics=["probe_named_only"])
        assert outcome.records[0].scores == {"probe_named_only": 1.0}
        assert main(["metrics"]) == 0
        assert "runs only when named (--metrics probe_named_only)" in capsys.readouterr().out
    finally:
        REGISTRY.pop("probe_named_only")
