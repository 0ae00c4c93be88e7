"""tau2-bench's released domain layouts: retail converts with the user simulator's scenario
rendered as tau2 renders it and the released simulator guidelines; telecom (user-side tools,
TOML databases, environment assertions) is refused with what is missing; the tau3 adapter
opens the user simulator's conversation the way tau2 does."""

from __future__ import annotations

import json

import pytest

from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.benchmarks.tau import GREETING
from pytest_srbench.datasets.formats import read_tau
from pytest_srbench.datasets.formats._common import DatasetError

GUIDELINES = (
    "# User Simulation Guidelines\nYou are playing the role of a customer.\n"
    "<PERSONA_GUIDELINES>\n## Task Completion\n- Generate '###STOP###' when done.\n"
)


def retail_task(tid: str, **scenario) -> dict:
    instructions = {
        "task_instructions": "You are detail-oriented.", "domain": "retail",
        "reason_for_call": "You received order #W2378156.\nYou wish to exchange the keyboard.",
        "known_info": "You are Yusuf Rossi in zip code 19122.",
        "unknown_info": "You do not remember your email address.",
    }  # fmt: skip
    return {
        "id": tid,
        "description": {"purpose": None, "relevant_policies": None, "notes": None},
        "user_scenario": {"persona": scenario.get("persona"),
                          "instructions": scenario.get("instructions", instructions)},
        "initial_state": None,
        "evaluation_criteria": {
            "actions": [
                {"action_id": f"{tid}_0", "name": "find_user_id_by_name_zip",
                 "arguments": {"first_name": "Yusuf", "last_name": "Rossi", "zip": "19122"},
                 "info": None},
                {"action_id": f"{tid}_1", "name": "exchange_delivered_order_items",
                 "arguments": {"order_id": "#W2378156", "item_ids": ["1151293680"],
                               "new_item_ids": ["7706410293"],
                               "payment_method_id": "credit_card_9513926"}, "info": None},
            ],
            "communicate_info": ["10"], "nl_assertions": ["Agent says 10 options."],
            "reward_basis": ["DB", "NL_ASSERTION"],
        },
    }  # fmt: skip


def tau2_data(tmp_path):
    """data/tau2/{domains/retail, domains/telecom, user_simulator} as tau2-bench ships them."""
    data = tmp_path / "tau2-bench" / "data" / "tau2"
    (data / "user_simulator").mkdir(parents=True)
    (data / "user_simulator" / "simulation_guidelines.md").write_text(GUIDELINES)
    retail = data / "domains" / "retail"
    retail.mkdir(parents=True)
    (retail / "db.json").write_text(json.dumps({"products": {}, "users": {}, "orders": {}}))
    (retail / "policy.md").write_text("# Retail agent policy\n")
    tasks = [
        retail_task("0"),
        retail_task("1", persona="A retired teacher.\nPolite."),
        retail_task("2", instructions="Ask for a refund of order #W1."),
    ]
    (retail / "tasks.json").write_text(json.dumps(tasks, indent=4))
    (retail / "split_tasks.json").write_text(json.dumps({"train": ["0"], "test": ["1", "2"],
                                                         "base": ["0", "1", "2"]}))  # fmt: skip
    telecom = data / "domains" / "telecom"
    telecom.mkdir()
    (telecom / "main_policy.md").write_text("# Telecom agent policy\n")
    (telecom / "tech_support_manual.md").write_text("# Manual\n")
    (telecom / "db.toml").write_text('[customers.C1]\nname = "A"\n')
    (telecom / "user_db.toml").write_text("[device]\nairplane_mode = true\n")
    telecom_task = {
        "id": "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]",
        "user_scenario": {"persona": None, "instructions": {
            "domain": "telecom", "reason_for_call": "Your mobile data does not work.",
            "known_info": "You are John Smith.", "unknown_info": None,
            "task_instructions": "Follow the agent's instructions."}},
        "initial_state": {"initialization_actions": [
            {"env_type": "user", "func_name": "turn_airplane_mode_on", "arguments": {}}]},
        "evaluation_criteria": {
            "actions": [{"action_id": "toggle_airplane_mode_0", "requestor": "user",
                         "name": "toggle_airplane_mode", "arguments": {}, "info": None}],
            "env_assertions": [{"env_type": "user", "func_name": "assert_mobile_data_status",
                                "arguments": {"expected_status": True}, "assert_value": True}],
            "reward_basis": ["ENV_ASSERTION"]},
    }  # fmt: skip
    (telecom / "tasks.json").write_text(json.dumps([telecom_task]))
    return data


def test_retail_converts_with_the_released_scenario_rendering_and_guidelines(tmp_path):
    data = tau2_data(tmp_path)
    rows = {row["metadata"]["upstream_id"]: row for row in read_tau(data / "domains" / "retail")}
    assert rows["0"]["user_scenario"] == (
        "Instructions:\n\tDomain: retail\n\tReason for call:\n"
        "\t\tYou received order #W2378156.\n\t\tYou wish to exchange the keyboard.\n"
        "\tKnown info:\n\t\tYou are Yusuf Rossi in zip code 19122.\n"
        "\tUnknown info:\n\t\tYou do not remember your email address.\n"
        "\tTask instructions:\n\t\tYou are detail-oriented."
    )
    assert rows["1"]["user_scenario"].startswith(
        "Persona:\n\tA retired teacher.\n\tPolite.\nInstructions:\n\tDomain: retail\n"
    )
    assert rows["2"]["user_scenario"] == "Instructions:\n\tAsk for a refund of order #W1."
    row = rows["0"]
    assert row["user_guidelines"] == GUIDELINES and row["domain"] == "retail"
    assert row["task_id"] == "retail-0" and row["required_outputs"] == ["10"]
    assert row["metadata"]["reward_basis"] == ["DB", "NL_ASSERTION"]
    assert row["metadata"]["upstream_splits"] == ["train"]
    assert row["tools"] == ["exchange_delivered_order_items", "find_user_id_by_name_zip"]
    assert row["expected_actions"][1]["arguments"]["new_item_ids"] == ["7706410293"]


def test_telecom_is_refused_naming_what_is_missing(tmp_path):
    data = tau2_data(tmp_path)
    with pytest.raises(DatasetError) as caught:
        read_tau(data / "domains" / "telecom")
    message = str(caught.value)
    assert "the telecom domain cannot be converted for tau3: it needs" in message
    for need in ("a user-side device database (user_db)", "a TOML database (db.toml",
                 "main_policy.md", "user-side tools (1 expected action(s) requested by the user)",
                 "environment assertions (1 task(s) graded by ENV_ASSERTION)",
                 "nothing was converted"):  # fmt: skip
        assert need in message
    with pytest.raises(DatasetError, match="telecom domain cannot be converted"):
        read_tau(data / "domains")  # a folder of domains: never converted in part


def test_the_user_simulator_gets_the_released_prompt_and_the_greeting():
    adapter = default_registry(with_entry_points=False).get("tau3")
    row = {
        "task_id": "library-0", "domain": "library", "policy": "# Library policy\n",
        "user_scenario": "Instructions:\n\tDomain: library\n\tReason for call:\n\t\tBorrow Dune.",
        "user_guidelines": GUIDELINES, "tools": ["get_member"],
        "initial_db": {"members": {}, "books": {}}, "expected_actions": [], "required_outputs": [],
    }  # fmt: skip
    case = adapter.render(row, 1)
    system, greeting = case.messages
    assert system.role == "system" and system.content == (
        "# User Simulation Guidelines\nYou are playing the role of a customer.\n\n"
        "## Task Completion\n- Generate '###STOP###' when done.\n\n\n<scenario>\n"
        "Instructions:\n\tDomain: library\n\tReason for call:\n\t\tBorrow Dune.\n</scenario>"
    )
    assert (greeting.role, greeting.content) == ("user", GREETING)
    own = adapter.render({**row, "user_guidelines": None}, 1).messages[0].content
    assert own.startswith("You play a customer") and own.endswith(
        "<scenario>\nInstructions:\n\tDomain: library\n\tReason for call:\n\t\tBorrow Dune.\n</scenario>"
    )


def test_a_domain_without_tools_here_is_refused_at_planning():
    adapter = default_registry(with_entry_points=False).get("tau3")
    row = {"task_id": "retail-0", "domain": "retail", "policy": "p", "user_scenario": "s",
           "tools": [], "db_asset": {"path": "assets/retail_db.json", "sha256": "0" * 64},
           "expected_actions": []}  # fmt: skip
    with pytest.raises(ValueError, match="tau domain 'retail' has no tool implementation here"):
        adapter.render(row, 1)
