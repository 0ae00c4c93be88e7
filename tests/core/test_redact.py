"""Redacting API key values from text, bytes and nested values."""

from pytest_srbench.core.models import Target
from pytest_srbench.core.redact import REDACTED, Redactor, target_secret_envs

KEY = "sk-live/abc+def_0123456789"


def test_text_bytes_and_nested_values_lose_every_form_of_the_key():
    redactor = Redactor([KEY])
    assert redactor.text(f"Bearer {KEY} and {KEY}") == f"Bearer {REDACTED} and {REDACTED}"
    escaped = KEY.replace("/", "\\/")  # a server that escapes slashes in JSON
    quoted = "sk-live%2Fabc%2Bdef_0123456789"  # a key echoed in a URL
    raw = f'data: {{"content": "{KEY}", "echo": "{escaped}", "url": "?k={quoted}"}}\n'.encode()
    assert KEY.encode() not in redactor.data(raw) and b"abc" not in redactor.data(raw)
    row = {"error": f"bad key {KEY}", "router": {"x-echo": KEY}, "list": [KEY, 3, None], KEY: 1}
    cleaned = redactor.value(row)
    assert KEY not in repr(cleaned)
    assert cleaned["router"] == {"x-echo": REDACTED} and cleaned["list"] == [REDACTED, 3, None]
    assert row["error"] == f"bad key {KEY}"  # a copy: the caller's value is untouched


def test_values_without_a_secret_are_returned_as_they_are():
    redactor = Redactor([KEY])
    row = {"final": "Answer: A", "usage": {"input_tokens": 3}}
    assert redactor.value(row) is row
    assert Redactor([]).value(row) is row and not Redactor([])


def test_placeholder_keys_are_not_secrets():
    """Local servers accept any key (EMPTY, dummy): replacing such words everywhere would
    rewrite prompts and answers."""
    redactor = Redactor(["EMPTY", "dummy", ""])
    assert not redactor
    assert redactor.text("EMPTY dummy") == "EMPTY dummy"


def test_the_secrets_come_from_the_targets_environment_variables():
    targets = [
        Target(id="a", model="m", base_url="http://h/v1", api_key_env="A_KEY"),
        Target(
            id="b", kind="mom", model="m", base_url="http://h/v1", api_key_env="A_KEY",
            preview_api_key_env="B_PREVIEW",
        ),
        Target(id="c", model="m", simulated=True),
    ]  # fmt: skip
    assert target_secret_envs(targets) == ["A_KEY", "B_PREVIEW"]
    redactor = Redactor.for_env(
        target_secret_envs(targets), {"A_KEY": KEY, "B_PREVIEW": "preview-secret-1"}
    )
    assert redactor.text(f"{KEY} preview-secret-1") == f"{REDACTED} {REDACTED}"
    assert not Redactor.for_env(["UNSET"], {})
