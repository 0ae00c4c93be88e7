"""tau3 rows: library-desk dialogues on a generated database; each plan is replayed before it is written."""

from __future__ import annotations

import copy
from typing import Any

from pytest_srbench.datasets.synth.common import Rng, Row, SynthError, native_id, surname

_FIRST_NAMES = (
    "Ada", "Ben", "Cleo", "Dara", "Eli", "Faye", "Gus", "Hana", "Ivo", "Juno", "Kai", "Lena",
    "Milo", "Nina", "Omar", "Pia", "Quin", "Rosa", "Sami", "Tove", "Uma", "Vik", "Wren", "Yara",
)  # fmt: skip
_ADJECTIVES = (
    "Amber", "Silent", "Hidden", "Northern", "Paper", "Quiet", "Distant", "Copper", "Hollow",
    "Winter", "Crimson", "Glass", "Wandering", "Last", "Burning", "Salt", "Iron", "Velvet",
    "Patient", "Folded", "Sunken", "Borrowed", "Lunar", "Tidal",
)  # fmt: skip
_NOUNS = (
    "Harbor", "Engine", "Orchard", "Lantern", "Bridge", "River", "Garden", "Candle", "Tower",
    "Meadow", "Letter", "Archive", "Island", "Mirror", "Signal", "Valley", "Voyage", "Clock",
    "Forest", "Window", "Kite", "Anchor", "Falcon", "Beacon",
)  # fmt: skip


def _book_title(rng: Rng) -> str:
    """A made-up book title such as "The Quiet Harbor" or "Copper Lanterns"."""
    adjective, noun = rng.choice(_ADJECTIVES), rng.choice(_NOUNS)
    if rng.random() < 0.5:
        return f"The {adjective} {noun}"
    return f"{adjective} {noun}s"


TAU_POLICY = (
    "You are the lending desk assistant of a public library. Verify the member id before any change. "
    "Members with unpaid fines cannot borrow until the fine is paid, and you record a payment only "
    "after the member agrees to it. When no copy of a book is available, offer a hold. Tell the "
    "member the due date of every book you lend (loans last 21 days). Use the tools; never invent records."
)
TAU_TOOLS = ["get_member", "find_books", "checkout_book", "return_book", "pay_fine", "place_hold"]
STOP = "###STOP###"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call as plans and expected actions write it."""
    return {"arguments": arguments, "name": name}


def _offer_hold(title: str) -> str:
    return f"{title} has no copy available right now; shall I place a hold for you?"


def _hold_placed(title: str) -> str:
    return f"Your hold on {title} is placed; we will let you know when it is back."


def _library(rng: Rng) -> tuple[dict[str, Any], list[str], list[str]]:
    """A database of six books and three or four members, the book ids and the member ids."""
    titles = list(dict.fromkeys(_book_title(rng) for _ in range(12)))[:6]
    authors = [f"{rng.choice(_FIRST_NAMES)} {surname(rng)}" for _ in range(3)]
    book_ids = [f"B{n}" for n in sorted(rng.sample(range(10, 99), len(titles)))]
    member_ids = [f"M{n}" for n in rng.sample(range(100, 999), rng.randint(3, 4))]
    names = rng.sample(_FIRST_NAMES, len(member_ids))
    books = {
        book_id: {
            "author": rng.choice(authors),
            "copies_available": rng.randint(0, 3),
            "title": title,
        }
        for book_id, title in zip(book_ids, titles, strict=True)
    }
    members = {
        member_id: {
            "fines_cents": rng.choice((0, 0, 25 * rng.randint(1, 40))),
            "loans": sorted(rng.sample(book_ids, rng.randint(0, 2))),
            "name": f"{name} {surname(rng)}",
        }
        for member_id, name in zip(member_ids, names, strict=True)
    }
    return {"books": books, "holds": [], "members": members}, book_ids, member_ids


def _tau_task(rng: Rng) -> dict[str, Any] | None:
    """A task of a random kind (borrow, pay a fine, return, place a hold, ...) whose reference plan
    has been replayed; None when the member has fewer than two books to ask about."""
    db, book_ids, member_ids = _library(rng)
    me_id = member_ids[0]
    me = db["members"][me_id]
    name = me["name"]
    kind = rng.choice(
        ("borrow", "fine-first", "return-and-hold", "return", "pay", "hold", "borrow-two")
    )
    free = [b for b in book_ids if b not in me["loans"]]
    if len(free) < 2:
        return None
    x, y = rng.sample(free, 2)
    title_x, title_y = db["books"][x]["title"], db["books"][y]["title"]
    fine = 25 * rng.randint(2, 80)
    due = "21 days"
    user: list[str]
    plan: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    required: list[str]
    if kind == "borrow":
        me["fines_cents"] = 0
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hi, I'm {name}, member {me_id}. I'd like to borrow {title_x}.",
            "Great, thank you!",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("find_books", query=title_x)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"say": f"Done: {title_x} is checked out to you and is due back in 21 days."},
            {"say": "You're welcome. Enjoy the book!"},
        ]
        expected, required = [_call("checkout_book", book_id=x, member_id=me_id)], [due]
        scenario = f"You are {name}, member {me_id}. You want to borrow the book {title_x}. Thank the agent when it is done."
    elif kind == "borrow-two":
        me["fines_cents"] = 0
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        db["books"][y]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hello, {name} here (member {me_id}). Could I borrow both {title_x} and {title_y}?",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=y, member_id=me_id)]},
            {
                "say": f"Both {title_x} and {title_y} are checked out to you; each is due back in 21 days."
            },
        ]
        expected = [
            _call("checkout_book", book_id=x, member_id=me_id),
            _call("checkout_book", book_id=y, member_id=me_id),
        ]
        required = [due]
        scenario = f"You are {name}, member {me_id}. You want to borrow {title_x} and {title_y} in one visit."
    elif kind == "fine-first":
        me["fines_cents"] = fine
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hello, this is {name}, member {me_id}. Can I borrow {title_x}?",
            "Yes, please record the payment and lend me the book.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {
                "say": f"You have an unpaid fine of {fine} cents, which must be paid before you can borrow. Shall I record the payment?"
            },
            {"tool_calls": [_call("pay_fine", amount_cents=fine, member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"say": f"Your fine is paid and {title_x} is checked out, due back in 21 days."},
        ]
        expected = [
            _call("pay_fine", amount_cents=fine, member_id=me_id),
            _call("checkout_book", book_id=x, member_id=me_id),
        ]
        required = ["fine", due]
        scenario = f"You are {name}, member {me_id}. You want to borrow {title_x}. If there is a fine, agree to pay it."
    elif kind == "pay":
        me["fines_cents"] = fine
        user = [
            f"Hi, {name}, member {me_id}. I'd like to settle my library fine.",
            "Yes, please record it.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"say": f"Your fine is {fine} cents. Shall I record a payment of {fine} cents?"},
            {"tool_calls": [_call("pay_fine", amount_cents=fine, member_id=me_id)]},
            {"say": "Thank you, your fine is fully paid."},
        ]
        expected, required = [_call("pay_fine", amount_cents=fine, member_id=me_id)], ["fully paid"]
        scenario = f"You are {name}, member {me_id}. You want to pay your whole fine; agree when the agent states the amount."
    elif kind == "return":
        me["loans"] = sorted({*me["loans"], x})
        user = [f"Good morning, {name} (member {me_id}). I'm bringing back {title_x}.", STOP]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"tool_calls": [_call("return_book", book_id=x, member_id=me_id)]},
            {"say": f"Thank you, {title_x} is returned and no longer on your account."},
        ]
        expected, required = [_call("return_book", book_id=x, member_id=me_id)], ["returned"]
        scenario = f"You are {name}, member {me_id}. You are returning {title_x}."
    elif kind == "hold":
        db["books"][y]["copies_available"] = 0
        user = [
            f"Hi, I'm {name}, member {me_id}. Is {title_y} available?",
            "Yes, please place a hold.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("find_books", query=title_y)]},
            {"say": _offer_hold(title_y)},
            {"tool_calls": [_call("place_hold", book_id=y, member_id=me_id)]},
            {"say": _hold_placed(title_y)},
        ]
        expected, required = [_call("place_hold", book_id=y, member_id=me_id)], ["hold"]
        scenario = f"You are {name}, member {me_id}. You would like {title_y}; a hold is fine if it is not available."
    else:  # return-and-hold
        me["loans"] = sorted({*me["loans"], x})
        db["books"][y]["copies_available"] = 0
        user = [
            f"Hi, {name} here, member {me_id}. I'm returning {title_x}, and I'd like {title_y}.",
            "Yes, a hold is fine.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("return_book", book_id=x, member_id=me_id)]},
            {"tool_calls": [_call("find_books", query=title_y)]},
            {"say": f"I've taken back {title_x}. {_offer_hold(title_y)}"},
            {"tool_calls": [_call("place_hold", book_id=y, member_id=me_id)]},
            {"say": _hold_placed(title_y)},
        ]
        expected = [
            _call("return_book", book_id=x, member_id=me_id),
            _call("place_hold", book_id=y, member_id=me_id),
        ]
        required = ["hold"]
        scenario = f"You are {name}, member {me_id}. You are returning {title_x} and would like {title_y}; a hold is fine if it is not available."
    _check_tau_plan(db, plan, expected, required)
    return {
        "domain": "library",
        "expected_actions": expected,
        "initial_db": db,
        "policy": TAU_POLICY,
        "reference_dialogue": {"agent": plan, "user": user},
        "required_outputs": required,
        "tools": list(TAU_TOOLS),
        "user_scenario": scenario,
    }


def _check_tau_plan(
    db: dict[str, Any],
    plan: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    required: list[str],
) -> None:
    """Every planned tool call succeeds, the plan ends in the expected database, every required
    output is said, and dropping the last tool step (how the simulator plays a wrong agent) does
    change the final database."""
    from pytest_srbench.benchmarks.tau_library import LibraryState

    def final(steps: list[dict[str, Any]]) -> dict[str, Any]:
        state = LibraryState(copy.deepcopy(db))
        for step in steps:
            for call in step.get("tool_calls") or []:
                ok, text = state.call(call["name"], dict(call["arguments"]))
                if not ok:
                    raise SynthError(f"internal: tau plan step {call} fails: {text}")
        return state.snapshot()

    target = final([{"tool_calls": expected}])
    if final(plan) != target:
        raise SynthError("internal: the tau reference plan does not reach the expected database")
    said = " ".join(str(step.get("say", "")) for step in plan).lower()
    if any(text.lower() not in said for text in required):
        raise SynthError("internal: the tau reference plan does not say every required output")
    last = max(i for i, step in enumerate(plan) if step.get("tool_calls"))
    if final(plan[:last] + plan[last + 1 :]) == target:
        raise SynthError("internal: the tau plan's last tool step does not change the database")


def tau_row(rng: Rng, index: int) -> Row | None:
    """Row ``index``: a library-desk task with its replayed plan; None when it gave up."""
    task = _tau_task(rng)
    return None if task is None else {**task, "task_id": native_id(index)}
