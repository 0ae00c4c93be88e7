"""Which adapters exist: the built-ins plus those other packages register through the
``pytest_srbench.benchmarks`` entry-point group (or a conftest's ``pytest_srbench_adapters`` hook)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from importlib.metadata import entry_points

from pytest_srbench.benchmarks.arc import ArcAgi2Adapter
from pytest_srbench.benchmarks.base import Adapter
from pytest_srbench.benchmarks.code import HumanEvalAdapter, LiveCodeBenchAdapter, SciCodeAdapter
from pytest_srbench.benchmarks.judged import HleAdapter, SimpleQaVerifiedAdapter
from pytest_srbench.benchmarks.mcq import GpqaDiamondAdapter, MmluAdapter, MmluProAdapter
from pytest_srbench.benchmarks.tau import Tau3Adapter
from pytest_srbench.benchmarks.terminal import TerminalBenchAdapter

ENTRY_POINT_GROUP = "pytest_srbench.benchmarks"


class AdapterRegistry:
    """Adapters by benchmark id; registering an id twice is an error."""

    def __init__(self, adapters: Iterable[Adapter] = ()) -> None:
        self._adapters: dict[str, Adapter] = {}
        for adapter in adapters:
            self.register(adapter)

    def register(self, adapter: Adapter) -> None:
        if not isinstance(adapter, Adapter):
            raise TypeError(f"{adapter!r} is not a pytest_srbench Adapter")
        if adapter.benchmark in self._adapters:
            raise ValueError(f"benchmark {adapter.benchmark!r} is registered twice")
        self._adapters[adapter.benchmark] = adapter

    def get(self, benchmark: str) -> Adapter:
        try:
            return self._adapters[benchmark]
        except KeyError:
            raise KeyError(
                f"no adapter for benchmark {benchmark!r} (known: {', '.join(sorted(self._adapters))})"
            ) from None

    def __contains__(self, benchmark: object) -> bool:
        return benchmark in self._adapters

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._adapters))


def builtin_adapters() -> list[Adapter]:
    """The adapters shipped with pytest-srbench: the nine sr-bench benchmarks and two
    extension examples (``mmlu``, ``humaneval``)."""
    return [
        MmluProAdapter(),
        GpqaDiamondAdapter(),
        SimpleQaVerifiedAdapter(),
        HleAdapter(),
        ArcAgi2Adapter(),
        LiveCodeBenchAdapter(),
        SciCodeAdapter(),
        TerminalBenchAdapter(),
        Tau3Adapter(),
        MmluAdapter(),
        HumanEvalAdapter(),
    ]


def default_registry(*, with_entry_points: bool = True) -> AdapterRegistry:
    """Built-ins, then every adapter advertised by an installed distribution."""
    registry = AdapterRegistry(builtin_adapters())
    if with_entry_points:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            loaded = entry.load()
            adapter = loaded() if isinstance(loaded, type) else loaded
            registry.register(adapter)
    return registry
