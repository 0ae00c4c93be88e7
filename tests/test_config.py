"""Configuration: files, precedence, validation messages, target selection."""

import pytest

from pytest_srbench.config import ConfigError, load_config


def test_defaults_without_files(tmp_path):
    config = load_config(tmp_path)
    assert config.store == ".srbench" and config.concurrency == 16
    assert [t.id for t in config.select_targets(None)] == ["sim-large", "sim-small"]


def test_pyproject_table_and_srbench_toml_precedence(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.srbench]\nconcurrency = 4\n")
    assert load_config(tmp_path).concurrency == 4
    (tmp_path / "srbench.toml").write_text("concurrency = 8\n")
    assert load_config(tmp_path).concurrency == 8


def test_pyproject_without_table_means_defaults(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert load_config(tmp_path).source is None


def test_targets_and_errors(tmp_path):
    (tmp_path / "srbench.toml").write_text(
        """
default_targets = ["gpt"]
[[targets]]
id = "gpt"
base_url = "https://api.example.com/v1"
model = "gpt-x"
api_key_env = "EXAMPLE_KEY"
concurrency = 4
[targets.prices.gpt-x]
input = 1.0
cached_input = 0.5
cache_write = 0.0
output = 4.0
"""
    )
    config = load_config(tmp_path)
    (target,) = config.select_targets(None)
    frozen = target.to_target()
    assert frozen.api_key_env == "EXAMPLE_KEY" and frozen.prices["gpt-x"].output == 4.0
    assert "concurrency" not in frozen.model_dump()
    with pytest.raises(ConfigError, match="unknown target"):
        config.select_targets(["nope"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("concurrency = [", "not valid TOML"),
        ("concurrency = 0", "concurrency"),
        (
            "[[targets]]\nid = 't'\nmodel = 'm'\nbase_url = 'http://h/v1'\napi_key = 'sk-123'\n",
            "api_key",
        ),
        ("[limits]\nmax_cost_usd = -1\n", "limit max_cost_usd must be finite and > 0"),
        ("surprise = 1\n", "surprise"),
    ],
)
def test_invalid_config_names_the_field(tmp_path, text, message):
    (tmp_path / "srbench.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)


def test_simulated_target_needs_a_known_simulated_model(tmp_path):
    (tmp_path / "srbench.toml").write_text(
        "[[targets]]\nid = 'x'\nmodel = 'ghost'\nsimulated = true\n"
    )
    with pytest.raises(ConfigError, match="not a simulated model"):
        load_config(tmp_path).select_targets(["x"])
