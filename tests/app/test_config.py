"""Configuration: files, precedence, validation messages, target selection."""

import pytest

from pytest_srbench.app.config import ConfigError, load_config


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


TARGET = '[[targets]]\nid = "t"\nmodel = "m"\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (TARGET, "targets.0: target 't' needs a base_url (or simulated = true"),
        (
            TARGET + 'base_url = "ftp://h/v1"\n',
            "target 't': base_url must be an http(s) URL with a host (got 'ftp://h/v1')",
        ),
        (TARGET + 'base_url = "http://[::1/v1"\n', "target 't': base_url is not a valid URL"),
        (
            TARGET + 'kind = "mom"\nbase_url = "http://h/v1"\npreview_url = "nope"\n',
            "target 't': preview_url must be an http(s) URL",
        ),
        (
            'transport = "curl"\n',
            "transport: unknown transport 'curl'; choose one of aiohttp, httpx-aiohttp, httpx",
        ),
        (
            TARGET + 'base_url = "http://h/v1"\n' + TARGET + 'base_url = "http://g/v1"\n',
            "targets: target id 't' is defined more than once",
        ),
        (
            '[[judges]]\nid = "j"\nmodel = "m"\nsimulated = true\n' * 2,
            "judges: target id 'j' is defined more than once",
        ),
    ],
    ids=["no-base-url", "scheme", "malformed", "preview-url", "transport", "dup", "dup-judge"],
)
def test_target_mistakes_are_refused_when_the_file_is_read(tmp_path, text, message):
    (tmp_path / "srbench.toml").write_text(text)
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert message in str(error.value) and "\n" not in str(error.value)
    assert "Value error" not in str(error.value) and "input_value" not in str(error.value)


@pytest.mark.parametrize(
    "url",
    [
        "http://me:hunter2-secret@api.example.com/v1",
        "https://hunter2-secret@api.example.com/v1",
        "http//me:hunter2-secret@api.example.com/v1",  # malformed and with a password
        "https://api.example.com/v1?api_key=hunter2-secret",
        "https://api.example.com/v1#hunter2-secret",
    ],
)
def test_a_url_with_credentials_is_refused_and_never_printed(tmp_path, url):
    (tmp_path / "srbench.toml").write_text(TARGET + f'base_url = "{url}"\n')
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    text = str(error.value)
    assert "target 't': base_url must not contain" in text
    assert "hunter2" not in text and "api.example.com" not in text


def test_validation_errors_never_repeat_a_secret_url():
    """Whatever prints a validation error (a log, a traceback), the URL is not in it."""
    from pydantic import ValidationError

    from pytest_srbench.app.config import SrbenchConfig
    from pytest_srbench.core.models import Target

    url = "http://me:hunter2-secret@api.example.com/v1"
    with pytest.raises(ValidationError) as target_error:
        Target(id="t", model="m", base_url=url)
    with pytest.raises(ValidationError) as config_error:
        SrbenchConfig.model_validate({"targets": [{"id": "t", "model": "m", "base_url": url}]})
    for error in (target_error.value, config_error.value):
        assert "must not contain credentials" in str(error) and "hunter2" not in str(error)


def test_a_managed_targets_server_settings_shape_execution_not_the_plan(tmp_path):
    (tmp_path / "srbench.toml").write_text(
        """
[[targets]]
id = "local"
model = "smollm2-135m"
managed = "llama-server"
[targets.server]
context = 20000
slots = 1
threads = 1
"""
    )
    (target,) = load_config(tmp_path).targets
    assert target.server is not None and target.server.context == 20000
    assert "server" not in target.to_target().model_dump()  # never frozen into the plan
    (tmp_path / "srbench.toml").write_text(
        '[[targets]]\nid = "remote"\nmodel = "m"\nbase_url = "http://h/v1"\n[targets.server]\nslots = 2\n'
    )
    with pytest.raises(ConfigError, match="server settings are only for managed"):
        load_config(tmp_path)
    (tmp_path / "srbench.toml").write_text(
        '[[targets]]\nid = "local"\nmodel = "m"\nmanaged = "llama-server"\n[targets.server]\nslots = 0\n'
    )
    with pytest.raises(ConfigError, match="slots"):
        load_config(tmp_path)
