"""Preview mode, pure: plan rules, the request envelope and the checks on a preview answer."""

import json

import pytest

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.preview import (
    config_url,
    preview_envelope,
    preview_url,
    routing_decision,
    routing_from_response,
)
from pytest_srbench.core.models import Case, Target
from pytest_srbench.core.plan.build import PlanError
from tests.core.helpers import PRICE, case, manifest, target


def router(**extra):
    fields = {"id": "r", "kind": "mom", "model": "router", "base_url": "http://127.0.0.1:9/v1",
              "prices": {"a": PRICE}, "config_hash": "h1", "max_inference_calls": 2}  # fmt: skip
    fields.update(extra)
    return Target(**fields)


def test_preview_plan_rules():
    with pytest.raises(PlanError, match="not a mom"):
        manifest([case("mmlu-pro", "1")], [target("t")], mode="preview")
    with pytest.raises(PlanError, match="needs a preview_url"):
        manifest([case("mmlu-pro", "1")], [router()], mode="preview")
    with pytest.raises(PlanError, match="only for preview mode"):
        manifest([case("mmlu-pro", "1")], [router()], preview_context={"session_id": "s"})
    with pytest.raises(PlanError, match="allows only"):
        manifest([case("mmlu-pro", "1")], [router(preview_url="http://127.0.0.1:9/p")],
                 mode="preview", preview_context={"user": "x"})  # fmt: skip
    with pytest.raises(PlanError, match="sampling_seed"):
        manifest([case("mmlu-pro", "1")], [router(preview_url="http://127.0.0.1:9/p")],
                 mode="preview", preview_context={"sampling_seed": True})  # fmt: skip
    # preview needs neither prices nor a config hash; the context defaults its seed
    plan = manifest(
        [case("mmlu-pro", "1")],
        [router(prices={}, config_hash=None, max_inference_calls=None,
                preview_url="http://127.0.0.1:9/api/v1/routing/preview")],
        mode="preview", preview_context={"session_id": "s-1"},
    )  # fmt: skip
    assert plan.mode == "preview"
    assert plan.preview_context == {"session_id": "s-1", "sampling_seed": plan.seed}
    with pytest.raises(PlanError, match="config_hash"):
        manifest([case("mmlu-pro", "1")], [router(config_hash=None)])  # live router


def test_router_only_fields_are_rejected_on_single_targets():
    with pytest.raises(ValueError, match="only for mom"):
        target("t", preview_url="http://127.0.0.1:9/p")
    with pytest.raises(ValueError, match="capture_recipe"):
        target("t", capture_recipe=True)
    with pytest.raises(ValueError, match="credentials"):
        router(preview_url="http://user:pw@127.0.0.1:9/p")


def test_envelope_urls_and_routing():
    live_router = router(preview_url="http://127.0.0.1:7/api/v1/routing/preview")
    plan = manifest([case("mmlu-pro", "1")], [live_router], mode="preview",
                    preview_context={"conversation_id": "c"})  # fmt: skip
    body = preview_envelope(plan, live_router, plan.cases[0])
    assert body["model"] == "router" and body["options"] == {"trace": True}
    assert body["messages"] == [{"role": "user", "content": "question 1"}]
    assert body["max_tokens"] == plan.sampling["max_tokens"]
    assert body["preview_context"] == {"conversation_id": "c", "sampling_seed": plan.seed}
    assert preview_url(live_router, None) == "http://127.0.0.1:7/api/v1/routing/preview"
    assert config_url(live_router, None) == "http://127.0.0.1:7/config/router"
    sim = router(base_url=None, simulated=True)
    assert preview_url(sim, "http://127.0.0.1:5/v1") == "http://127.0.0.1:5/api/v1/routing/preview"
    assert (
        config_url(sim, "http://127.0.0.1:5/v1") == "http://127.0.0.1:5/config/router?router=router"
    )
    with pytest.raises(CallFailure, match="no preview_url"):
        preview_url(router(), None)
    no_messages = Case(id="scicode/1", benchmark="scicode")
    with pytest.raises(CallFailure, match="messages"):
        preview_envelope(plan, live_router, no_messages)

    answer = {
        "selected_model": "a",
        "decision_result": {"decision_name": "math"},
        "config_hash": "h1",
    }
    routing = routing_from_response(json.dumps(answer).encode(), live_router)
    assert routing_decision(routing) == "math"
    assert routing_decision({"decision_result": None}) is None
    with pytest.raises(CallFailure, match="identity"):
        routing_from_response(json.dumps({**answer, "config_hash": "other"}).encode(), live_router)
    with pytest.raises(CallFailure, match="not valid JSON"):
        routing_from_response(b"<html>", live_router)
    with pytest.raises(CallFailure, match="not a JSON object"):
        routing_from_response(b"[1]", live_router)
    with pytest.raises(CallFailure, match="exceeds"):
        routing_from_response(b" " * 300_000, live_router)
