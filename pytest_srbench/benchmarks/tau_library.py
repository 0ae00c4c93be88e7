"""An original small tau-style domain, a lending library: members, books, loans, fines and
holds, with the tools an agent may call. Pure functions over a JSON-able database."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from pytest_srbench.benchmarks.agent_tools import function_tool

DB = dict[str, Any]
_ID = {"type": "string"}


class ToolError(ValueError):
    """A tool refused the call (the agent sees the message; the database is unchanged)."""


def _member(db: DB, member_id: str) -> dict[str, Any]:
    member = db["members"].get(member_id)
    if member is None:
        raise ToolError(f"no member {member_id}")
    return member  # type: ignore[no-any-return]


def _book(db: DB, book_id: str) -> dict[str, Any]:
    book = db["books"].get(book_id)
    if book is None:
        raise ToolError(f"no book {book_id}")
    return book  # type: ignore[no-any-return]


def get_member(db: DB, member_id: str) -> Any:
    return {"member_id": member_id, **_member(db, member_id)}


def find_books(db: DB, query: str) -> Any:
    needle = query.lower().strip()
    return [
        {"book_id": book_id, **book}
        for book_id, book in sorted(db["books"].items())
        if needle in book["title"].lower() or needle in book["author"].lower()
    ]


def checkout_book(db: DB, member_id: str, book_id: str) -> Any:
    member, book = _member(db, member_id), _book(db, book_id)
    if member["fines_cents"] > 0:
        raise ToolError("member has unpaid fines; they must be paid before borrowing")
    if book["copies_available"] < 1:
        raise ToolError("no copy is available; place a hold instead")
    if book_id in member["loans"]:
        raise ToolError("the member already has this book")
    book["copies_available"] -= 1
    member["loans"].append(book_id)
    return {"status": "checked out", "book_id": book_id, "due_in_days": 21}


def return_book(db: DB, member_id: str, book_id: str) -> Any:
    member, book = _member(db, member_id), _book(db, book_id)
    if book_id not in member["loans"]:
        raise ToolError("the member does not have this book on loan")
    member["loans"].remove(book_id)
    book["copies_available"] += 1
    return {"status": "returned", "book_id": book_id}


def pay_fine(db: DB, member_id: str, amount_cents: int) -> Any:
    member = _member(db, member_id)
    if not isinstance(amount_cents, int) or amount_cents <= 0:
        raise ToolError("amount_cents must be a positive integer")
    if amount_cents > member["fines_cents"]:
        raise ToolError(f"the fine is only {member['fines_cents']} cents")
    member["fines_cents"] -= amount_cents
    return {"status": "paid", "remaining_cents": member["fines_cents"]}


def place_hold(db: DB, member_id: str, book_id: str) -> Any:
    _member(db, member_id)
    book = _book(db, book_id)
    if book["copies_available"] > 0:
        raise ToolError("a copy is available; check it out instead")
    holds = db.setdefault("holds", [])
    if {"member_id": member_id, "book_id": book_id} in holds:
        raise ToolError("the hold already exists")
    holds.append({"member_id": member_id, "book_id": book_id})
    return {"status": "hold placed", "position": len(holds)}


TOOLS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "get_member": (get_member, function_tool("get_member", "Look up a member by id.", {"member_id": _ID}, ["member_id"])),
    "find_books": (find_books, function_tool("find_books", "Search books by title or author.", {"query": {"type": "string"}}, ["query"])),
    "checkout_book": (checkout_book, function_tool("checkout_book", "Lend a book to a member.", {"member_id": _ID, "book_id": _ID}, ["member_id", "book_id"])),
    "return_book": (return_book, function_tool("return_book", "Take back a book from a member.", {"member_id": _ID, "book_id": _ID}, ["member_id", "book_id"])),
    "pay_fine": (pay_fine, function_tool("pay_fine", "Record a fine payment in cents.", {"member_id": _ID, "amount_cents": {"type": "integer"}}, ["member_id", "amount_cents"])),
    "place_hold": (place_hold, function_tool("place_hold", "Reserve a book that has no copy available.", {"member_id": _ID, "book_id": _ID}, ["member_id", "book_id"])),
}  # fmt: skip


class LibraryState:
    """One task's mutable copy of the library database."""

    def __init__(self, initial: DB) -> None:
        self.db = copy.deepcopy(initial)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """(succeeded, result text); a refused or malformed call leaves the database as it was."""
        entry = TOOLS.get(name)
        if entry is None:
            return (False, f"error: unknown tool {name}")
        before = copy.deepcopy(self.db)
        try:
            result = entry[0](self.db, **arguments)
        except (ToolError, TypeError, KeyError) as error:
            self.db = before
            return (False, f"error: {error}")
        return (True, json.dumps(result, sort_keys=True))

    def snapshot(self) -> DB:
        return copy.deepcopy(self.db)


def schemas(names: list[str]) -> list[dict[str, Any]]:
    return [TOOLS[name][1] for name in names if name in TOOLS]
