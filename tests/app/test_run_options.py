"""The run options are declared once: the flag table and the model agree, and every entry
point (pytest flags, the service's request) reads and writes the same values."""

from __future__ import annotations

import argparse
import re
from typing import get_args

import pytest
from pydantic import ValidationError

from pytest_srbench.app.config import SrbenchConfig
from pytest_srbench.app.run_flags import RUN_FLAGS
from pytest_srbench.app.run_options import Profile, RunOptions, validated_options
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import PROFILES
from pytest_srbench.plugin.options import add_options, run_options
from pytest_srbench.service.worker import RunRequest

SAMPLES = [
    RunOptions(),
    RunOptions(profile="quick", benchmarks=["mmlu-pro", "gpqa"], targets=["a", "b"], limit=3,
               seed=7, repeats=2, name="nightly run", limits={"max_cost_usd": 2.5,
               "idle_timeout_s": 60}, sampling={"temperature": 0}, concurrency=32,
               retrieval={"mode": "fts", "top_k": 10, "rrf_k": 0, "reranker": "minilm-maxsim"}),
    RunOptions(mode="preview", preview_context={"session_id": "s-1", "sampling_seed": 4},
               offline=True),
]  # fmt: skip


def test_the_flag_table_and_the_model_name_the_same_options_in_the_same_order():
    assert list(RUN_FLAGS) == list(RunOptions.model_fields)
    assert get_args(Profile) == PROFILES == RUN_FLAGS["profile"].choices


class ParsedFlags:
    """The ``--srbench-*`` flags as the plugin declares them, parsed by argparse (what pytest
    parses with), behind the one method ``run_options`` reads: ``getoption``.

    (pytester's in-process config would import every installed plugin into this process and
    then unload them, which breaks C extensions such as numpy for later tests.)"""

    def __init__(self, *args: str) -> None:
        parser = argparse.ArgumentParser()

        class Group:
            def addoption(self, *names: str, **kwargs: object) -> None:
                parser.add_argument(*names, **kwargs)  # type: ignore[arg-type]

        class Declarations:
            def getgroup(self, *_: object) -> Group:
                return Group()

        add_options(Declarations())  # type: ignore[arg-type]
        self.values = vars(parser.parse_args(list(args)))

    def getoption(self, dest: str) -> object:
        return self.values[dest]


@pytest.mark.parametrize("options", SAMPLES)
def test_pytest_flags_rendered_from_options_parse_back_to_the_same_options(options):
    config = ParsedFlags(*options.pytest_args())
    assert run_options(config, SrbenchConfig()) == options  # type: ignore[arg-type]


def test_the_service_request_renders_the_same_flags_behind_its_store_and_key(tmp_path):
    request = RunRequest(**SAMPLES[1].model_dump())
    args = request.worker_args(tmp_path, "key-1")
    assert args[-len(SAMPLES[1].pytest_args()) :] == SAMPLES[1].pytest_args()
    assert f"--srbench-store={tmp_path}" in args and "--srbench-run-key=key-1" in args


def test_a_profile_from_the_configuration_fills_in_when_no_flag_names_one():
    config = ParsedFlags("--srbench-benchmark=mmlu-pro")
    assert run_options(config, SrbenchConfig(profile="quick")).profile == "quick"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("values", "flag"),
    [({"repeats": 101}, "--srbench-repeats"), ({"seed": -1}, "--srbench-seed"),
     ({"limit": 0}, "--srbench-limit"), ({"concurrency": 5000}, "--srbench-concurrency"),
     ({"profile": "huge"}, "--srbench-profile"), ({"name": ""}, "--srbench-name"),
     ({"retrieval": {"top_k": 0}}, "--srbench-retrieval")],
)  # fmt: skip
def test_an_out_of_range_option_names_its_flag(values, flag):
    with pytest.raises(InputError, match=flag):
        validated_options(values)


def test_an_unknown_option_is_refused():
    with pytest.raises(InputError, match="surprise"):
        validated_options({"surprise": 1})


def test_retrieval_settings_come_from_repeated_flags():
    config = ParsedFlags("--srbench-benchmark=rag-smoke", "--srbench-retrieval", "mode=hybrid",
                         "--srbench-retrieval=top_k=8", "--srbench-retrieval=reranker=none")  # fmt: skip
    options = run_options(config, SrbenchConfig())  # type: ignore[arg-type]
    assert options.retrieval == {"mode": "hybrid", "top_k": 8, "reranker": "none"}


def test_the_dashboards_retrieval_body_is_a_run_request():
    body = {"retrieval": {"mode": "vector", "top_k": 5, "rrf_k": 60, "reranker": None}}
    request = RunRequest.model_validate(body)
    assert request.retrieval == {"mode": "vector", "top_k": 5, "rrf_k": 60}  # null: unchanged
    assert RunRequest.model_validate({"retrieval": None}).retrieval == {}
    flags = [arg for arg in request.pytest_args() if arg.startswith("--srbench-retrieval")]
    assert flags == ["--srbench-retrieval=mode=vector", "--srbench-retrieval=top_k=5",
                     "--srbench-retrieval=rrf_k=60"]  # fmt: skip


@pytest.mark.parametrize(
    ("retrieval", "message"),
    [({"mode": "fts", "rerank": "none"}, "unknown retrieval setting(s) 'rerank'"),
     ({"reranker": "cross-encoder"}, "retrieval.reranker must be null or one of"),
     ({"top_k": True}, "retrieval.top_k must be in 1..50"),
     ({"mode": ["fts"]}, "retrieval.mode must be one of")],
)  # fmt: skip
def test_bad_retrieval_settings_are_refused_naming_the_setting(retrieval, message):
    with pytest.raises(InputError, match=re.escape(f"--srbench-retrieval: {message}")):
        validated_options({"retrieval": retrieval})
    with pytest.raises(ValidationError, match=re.escape(message)):  # the service's 422
        RunRequest.model_validate({"retrieval": retrieval})


def test_a_malformed_retrieval_flag_is_a_usage_error():
    with pytest.raises(SystemExit):
        ParsedFlags("--srbench-retrieval=reranker")
