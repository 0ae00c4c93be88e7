"""A run's retrieval settings override every retrieval target of its plan at planning time,
so the frozen manifest and its hash hold them; chat targets are left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.app.config import ConfigError, SrbenchConfig
from pytest_srbench.app.planning import build_draft, with_run_retrieval
from pytest_srbench.app.run_options import RunOptions
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.models import Manifest

RERANKED = {
    "targets": [
        {"id": "my-notes", "kind": "retrieval", "model": "notes", "simulated": True,
         "retrieval": {"mode": "vector", "top_k": 3, "embedding_dimensions": 384}},
    ]
}  # fmt: skip


def plan(tmp_path: Path, config: SrbenchConfig, **options: object) -> Manifest:
    request = RunOptions.model_validate(options)
    registry = default_registry(with_entry_points=False)
    return build_draft(config, request, registry, tmp_path).freeze()


def test_every_retrieval_target_gets_the_runs_settings_over_its_own(tmp_path):
    settings = {"mode": "fts", "reranker": "minilm-maxsim"}
    manifest = plan(tmp_path, SrbenchConfig(), benchmarks=["rag-smoke"], retrieval=settings)
    params = {target.id: target.retrieval for target in manifest.targets}
    assert params == {
        f"sim-rag-{mode}": {"mode": "fts", "top_k": 5, "reranker": "minilm-maxsim"}
        for mode in ("fts", "vector", "hybrid")
    }
    plain = plan(tmp_path, SrbenchConfig(), benchmarks=["rag-smoke"])
    assert plain.plan_sha256 != manifest.plan_sha256  # the settings are part of the plan


def test_settings_the_run_leaves_out_stay_the_targets(tmp_path):
    config = SrbenchConfig.model_validate(RERANKED)
    manifest = plan(tmp_path, config, benchmarks=["rag-smoke"], targets=["my-notes"],
                    retrieval={"top_k": 10, "rrf_k": 20, "reranker": None})  # fmt: skip
    (target,) = manifest.targets
    assert target.retrieval == {"mode": "vector", "top_k": 10, "rrf_k": 20,
                                "embedding_dimensions": 384}  # fmt: skip


def test_chat_targets_of_the_same_plan_are_untouched(tmp_path):
    manifest = plan(tmp_path, SrbenchConfig(), benchmarks=["rag-smoke", "mmlu-pro"],
                    retrieval={"mode": "hybrid"})  # fmt: skip
    kinds = {target.id: (target.kind, target.retrieval) for target in manifest.targets}
    assert kinds["sim-large"] == ("single", {}) and kinds["sim-small"] == ("single", {})
    assert kinds["sim-rag-fts"] == ("retrieval", {"mode": "hybrid", "top_k": 5})


def test_a_merged_setting_the_target_cannot_hold_is_a_config_error():
    config = SrbenchConfig.model_validate(RERANKED)
    (target,) = config.targets
    with pytest.raises(ConfigError, match=r"retrieval target 'my-notes': retrieval\.top_k"):
        with_run_retrieval(target, {"top_k": 99})  # RunOptions refuses it before planning
