"""Each cell's own output. Test bodies run concurrently (on the engine's loop, in threads) while
pytest walks the items, so pytest's capture would hand whatever they write to the item that
happens to be running. While a session runs cells, writes to ``sys.stdout`` / ``sys.stderr``
and log records made inside a body are routed to the running body's cell instead (the body's
cell travels in a context variable, ``client.CURRENT``, which asyncio tasks and
``asyncio.to_thread`` carry along), and its item's report gets them as pytest's own sections:
"Captured stdout call", "Captured stderr call", "Captured log call".

The routing sits inside pytest's capture: each capture of ``sys.stdout`` / ``sys.stderr`` (its
stream while capturing and the one it restores while suspended) is wrapped by a ``RoutedStream``
that passes every write outside a body straight through. With ``-s`` (``--capture=no``) nothing
is wrapped: a body's prints go straight to the terminal, as any test's would. A body that prints
nothing costs nothing (its buffer is made at its first write). What does not go through
``sys.stdout`` (a subprocess's or C code's writes to the file descriptors) is captured by pytest
as before, with the item running at that moment.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest

from pytest_srbench.plugin.client import CURRENT


class CellOutput:
    """What one body wrote: its stdout and stderr writes and its formatted log records."""

    __slots__ = ("log", "stderr", "stdout")

    def __init__(self) -> None:
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.log: list[str] = []

    def sections(self) -> tuple[tuple[str, str], ...]:
        """pytest's report sections of a call phase: (key, text), the empty ones left out."""
        found = []
        for key in ("stdout", "stderr"):
            text = "".join(getattr(self, key))
            if text:
                found.append((key, text))
        if self.log:
            found.append(("log", "\n".join(self.log)))
        return tuple(found)


def _output() -> CellOutput | None:
    """The running body's output buffer (made at its first write), or None outside a body."""
    scope = CURRENT.get()
    if scope is None:
        return None
    output = scope.output
    if output is None:
        output = scope.output = CellOutput()
    return output


class RoutedStream:
    """A text stream that sends a body's writes to its cell and every other write to the stream
    it wraps (anything else it is asked is the wrapped stream's)."""

    def __init__(self, under: Any, key: str, tee: bool = False) -> None:
        self._under = under
        self._key = key
        self._tee = tee  # --capture=tee-sys: a body's writes also reach the terminal

    def write(self, text: str) -> int:
        output = _output()
        if output is None:
            return int(self._under.write(text))
        getattr(output, self._key).append(text)
        if self._tee:
            self._under.write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if CURRENT.get() is None or self._tee:
            self._under.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._under, name)

    def __repr__(self) -> str:
        return f"<RoutedStream {self._key} over {self._under!r}>"


class CellLogHandler(logging.Handler):
    """Log records made inside a body, formatted as pytest's report handler formats them, go to
    the body's cell; every other record is left to the handlers it reaches anyway."""

    def emit(self, record: logging.LogRecord) -> None:
        output = _output()
        if output is not None:
            try:
                output.log.append(self.format(record))
            except Exception:  # (as logging.Handler.handleError, without the noise)
                output.log.append(record.getMessage())


class NotInABody(logging.Filter):
    """Keeps a body's records out of pytest's report handler (the running item's "Captured log
    call"): they are the body's cell's."""

    def filter(self, record: logging.LogRecord) -> bool:
        return CURRENT.get() is None


class OutputRouting:
    """Routes the output of bodies to their cells for as long as a session runs cells."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self._wrapped: list[tuple[Any, str, Any]] = []  # (object, attribute, its old value)
        self._handler: CellLogHandler | None = None
        self._filtered: tuple[logging.Handler, logging.Filter] | None = None
        self._root_level: int | None = None

    def install(self) -> None:
        self._route_streams()
        self._route_logs()

    def _route_streams(self) -> None:
        capman = self.config.pluginmanager.getplugin("capturemanager")
        capturing = getattr(capman, "_global_capturing", None)
        method = getattr(capman, "_method", "no")
        if capturing is None or method == "no":
            return  # -s: a body writes straight through
        for key, name in (("stdout", "out"), ("stderr", "err")):
            capture = getattr(capturing, name, None)
            capture = getattr(capture, "syscapture", capture)  # fd capture's sys.* part
            if capture is None or not hasattr(capture, "tmpfile") or not hasattr(capture, "_old"):
                continue  # (another pytest's capture: left as it is)
            for attribute in ("tmpfile", "_old"):
                old = getattr(capture, attribute)
                tee = method == "tee-sys" and attribute == "tmpfile"
                routed = RoutedStream(old, key, tee=tee)
                self._wrapped.append((capture, attribute, old))
                setattr(capture, attribute, routed)
                if getattr(sys, key) is old:  # capturing or suspended: the one in place now
                    setattr(sys, key, routed)

    def _route_logs(self) -> None:
        logging_plugin = self.config.pluginmanager.get_plugin("logging-plugin")
        if logging_plugin is None:
            return
        handler = CellLogHandler(level=getattr(logging_plugin, "log_level", None) or 0)
        formatter = getattr(logging_plugin, "formatter", None)
        if formatter is not None:
            handler.setFormatter(formatter)
        root = logging.getLogger()
        root.addHandler(handler)
        self._handler = handler
        level = getattr(logging_plugin, "log_level", None)
        if level is not None and level < root.level:  # as pytest's capture of an item's logs
            self._root_level = root.level
            root.setLevel(level)
        report_handler = getattr(logging_plugin, "report_handler", None)
        if isinstance(report_handler, logging.Handler):
            keep_out = NotInABody()
            report_handler.addFilter(keep_out)
            self._filtered = (report_handler, keep_out)

    def uninstall(self) -> None:
        for capture, attribute, old in reversed(self._wrapped):
            setattr(capture, attribute, old)
        self._wrapped.clear()
        for key in ("stdout", "stderr"):  # whichever wrapped stream is in place now
            current = getattr(sys, key)
            if isinstance(current, RoutedStream):
                setattr(sys, key, current._under)
        root = logging.getLogger()
        if self._handler is not None:
            root.removeHandler(self._handler)
            self._handler = None
        if self._root_level is not None:
            root.setLevel(self._root_level)
            self._root_level = None
        if self._filtered is not None:
            self._filtered[0].removeFilter(self._filtered[1])
            self._filtered = None
