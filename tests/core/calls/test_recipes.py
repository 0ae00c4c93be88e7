"""Frozen recipes, pure: capture conditions and redaction."""

from pytest_srbench.core.calls.recipes import ConfigRead, recipe_snapshot, recipe_summary, redact
from pytest_srbench.core.models import Target
from tests.core.helpers import PRICE

ROUTER = Target(id="r", kind="mom", model="router", base_url="http://127.0.0.1:9/v1",
                prices={"a": PRICE}, config_hash="h1", max_inference_calls=2,
                capture_recipe=True)  # fmt: skip
CONFIG = {
    "decisions": [{"name": "math", "model": "a", "keywords": ["prove"]}],
    "backends": [{"model": "a", "base_url": "http://10.0.0.7:8000/v1", "api_key": "sk-live",
                  "endpoint": "10.0.0.7", "port": 8000, "weight": 2}],
    "auth": {"admin_token": "t", "Authorization": "Bearer x"},
}  # fmt: skip


def read(etag="e1", generated="h1", active="h1", config=CONFIG):
    return ConfigRead(etag=etag, generated_hash=generated, active_hash=active, config=config)


def test_redaction_drops_connection_details_and_credentials():
    redacted = redact(CONFIG)
    assert redacted == {
        "decisions": [{"name": "math", "model": "a", "keywords": ["prove"]}],
        "backends": [{"model": "a", "weight": 2}],
        "auth": {},
    }
    assert "sk-live" not in str(redacted) and "10.0.0.7" not in str(redacted)


def test_captured_only_when_hashes_match_and_etag_is_unchanged():
    snapshot = recipe_snapshot(ROUTER, read(), read(), "2026-11-30T00:00:00+00:00")
    assert snapshot["status"] == "captured" and snapshot["config_hash"] == "h1"
    assert snapshot["recipe"] == redact(CONFIG) and len(snapshot["projection_sha256"]) == 64
    assert "recipe" not in recipe_summary(ROUTER, snapshot)
    refused = {
        "generated config hash before": recipe_snapshot(ROUTER, read(generated="h0"), read(), "t"),
        "active config hash before": recipe_snapshot(ROUTER, read(active="h0"), read(), "t"),
        "generated config hash after": recipe_snapshot(ROUTER, read(), read(generated="h2"), "t"),
        "ETag changed": recipe_snapshot(ROUTER, read(), read(etag="e2"), "t"),
        "ETag changed (or is missing)": recipe_snapshot(
            ROUTER, read(etag=None), read(etag=None), "t"
        ),
    }
    for reason, snapshot in refused.items():
        assert snapshot["status"] == "unavailable" and reason in snapshot["reason"]
        assert "recipe" not in snapshot


def test_summary_without_a_snapshot_is_unavailable_never_borrowed():
    assert recipe_summary(ROUTER, None) == {
        "target_id": "r",
        "status": "unavailable",
        "reason": "no recipe was captured for this run",
    }
    off = ROUTER.model_copy(update={"capture_recipe": False})
    assert recipe_summary(off, None)["reason"] == "capture_recipe is off for this target"
