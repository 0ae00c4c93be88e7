"""Planning: judge and user-simulator bindings reach the server they name, and generation
parameters a plan cannot send are refused while planning, with the accepted ones listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.app.config import ConfigError, SrbenchConfig
from pytest_srbench.app.planning import build_draft, builtin_auxiliary_needed
from pytest_srbench.app.run_options import RunOptions
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.models import ALLOWED_REQUEST_PARAMS, Manifest

FREE = {"input": 0.0, "cached_input": 0.0, "cache_write": 0.0, "output": 0.0}
REAL = {"id": "local", "model": "smollm2-135m", "base_url": "http://127.0.0.1:9/v1",
        "prices": {"smollm2-135m": FREE}}  # fmt: skip


def plan(tmp_path: Path, config: SrbenchConfig, **options: object) -> Manifest:
    request = RunOptions.model_validate(options)
    registry = default_registry(with_entry_points=False)
    return build_draft(config, request, registry, tmp_path).freeze()


def real_config(**benchmarks: dict[str, str]) -> SrbenchConfig:
    return SrbenchConfig.model_validate(
        {"default_targets": ["local"], "targets": [REAL], "benchmarks": benchmarks}
    )


def test_a_builtin_judge_bound_for_a_real_target_is_served_by_the_simulator(tmp_path):
    config = real_config(hle={"judge": "sim-judge"}, tau3={"simulator": "sim-user"})
    manifest = plan(tmp_path, config, benchmarks=["hle", "tau3"])
    judge, user = manifest.auxiliary_targets["sim-judge"], manifest.auxiliary_targets["sim-user"]
    # never the subject's server: no base_url means the simulator the session starts
    assert judge.simulated and judge.base_url is None and judge.model == "sim-judge"
    assert user.simulated and user.base_url is None
    assert manifest.benchmark_options == {
        "hle": {"judge": "sim-judge"},
        "tau3": {"simulator": "sim-user"},
    }


def test_simulated_subjects_on_one_external_simulator_share_it_with_their_judge(tmp_path):
    external = "http://127.0.0.1:8089/v1"
    config = SrbenchConfig.model_validate(
        {"default_targets": ["big"],
         "targets": [{"id": "big", "model": "sim-large", "simulated": True, "base_url": external,
                      "prices": {"sim-large": FREE}}]}
    )  # fmt: skip
    manifest = plan(tmp_path, config, benchmarks=["simpleqa-verified"])
    assert manifest.auxiliary_targets["sim-judge"].base_url == external


def test_a_real_target_without_a_judge_is_one_line_saying_how_to_add_one(tmp_path):
    with pytest.raises(ConfigError) as refused:
        plan(tmp_path, real_config(), benchmarks=["hle"])
    message = str(refused.value)
    assert "hle needs a judge target" in message and "\n" not in message
    assert "[tool.srbench.benchmarks.hle]" in message and '"sim-judge"' in message


def test_the_session_knows_before_planning_whether_its_simulator_serves_a_judge():
    config = real_config(hle={"judge": "sim-judge"})
    assert builtin_auxiliary_needed(config, None)
    assert builtin_auxiliary_needed(config, ["hle", "mmlu-pro"])
    assert not builtin_auxiliary_needed(config, ["mmlu-pro"])
    assert not builtin_auxiliary_needed(real_config(), None)
    own = SrbenchConfig.model_validate(
        {"targets": [REAL], "judges": [{**REAL, "id": "sim-judge"}],
         "benchmarks": {"hle": {"judge": "sim-judge"}}}
    )  # fmt: skip
    assert not builtin_auxiliary_needed(own, None)  # a configured judge of that id is real


@pytest.mark.parametrize(
    ("where", "config", "options"),
    [
        ("sampling", {"sampling": {"cache_prompt": True}}, {}),
        ("sampling", {}, {"sampling": {"cache_prompt": 1}}),
    ],
)
def test_an_unsupported_generation_parameter_is_refused_with_the_accepted_ones(
    tmp_path, where, config, options
):
    with pytest.raises(ConfigError) as refused:
        build_draft(
            SrbenchConfig.model_validate({**config, "targets": [REAL]}),
            RunOptions.model_validate(
                {"benchmarks": ["mmlu-pro"], "targets": ["local"], **options}
            ),
            default_registry(with_entry_points=False),
            tmp_path,
        )
    message = str(refused.value)
    assert message.startswith(f"{where}: unsupported generation parameter(s) cache_prompt")
    assert all(name in message for name in ALLOWED_REQUEST_PARAMS)


def test_a_target_with_an_unsupported_request_param_names_the_accepted_ones():
    with pytest.raises(ValueError) as refused:
        SrbenchConfig.model_validate(
            {"targets": [{**REAL, "request_params": {"cache_prompt": True}}]}
        )
    message = str(refused.value)
    assert (
        "cache_prompt" in message and "accepted: chat_template_kwargs, frequency_penalty" in message
    )
