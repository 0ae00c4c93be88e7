"""Progress status: counts read from a real store, drawn in place or as log lines."""

import io

from _pytest._io import TerminalWriter

from pytest_srbench.plugin.progress import ProgressDisplay, Status, read_status
from pytest_srbench.store import open_store
from tests.core.helpers import case, manifest, target


class Terminal:
    """The two TerminalReporter methods the display uses, over a real TerminalWriter."""

    def __init__(self):
        self.file = io.StringIO()
        self._tw = TerminalWriter(self.file)
        self._tw.fullwidth = 120

    def ensure_newline(self):
        if self._tw.width_of_current_line:
            self._tw.line()

    def write_line(self, text):
        self._tw.line(text)


def test_read_status_counts_cells_calls_and_spend(tmp_path):
    store = open_store(tmp_path / "s")
    plan = manifest([case("mmlu-pro", str(i)) for i in range(4)], [target("t")])
    store.create_run("run-1", plan)
    with store.transaction():
        store.upsert_result(
            "run-1", {"case_id": "mmlu-pro/0", "target_id": "t", "status": "completed"}
        )
        store.upsert_result(
            "run-1", {"case_id": "mmlu-pro/1", "target_id": "t", "status": "failed"}
        )
        store.upsert_result(
            "run-1", {"case_id": "mmlu-pro/2", "target_id": "t", "status": "running"}
        )
        store.insert_call(
            "run-1",
            {
                "id": "a",
                "case_id": "mmlu-pro/0",
                "target_id": "t",
                "role": "subject",
                "status": "completed",
                "cost_usd": 0.25,
            },
        )
        store.insert_call(
            "run-1",
            {
                "id": "b",
                "case_id": "mmlu-pro/2",
                "target_id": "t",
                "role": "subject",
                "status": "sent",
            },
        )
    status = read_status(store, "run-1", 4, started=0.0)
    assert (status.done, status.failed, status.in_flight, status.spend_usd) == (2, 1, 1, 0.25)
    assert "2/4 cells done · 1 in flight · 1 failed · $0.2500 known spend" in status.text()


def test_in_place_status_is_erased_before_pytest_writes_again():
    terminal = Terminal()
    terminal._tw.write("..w.")
    display = ProgressDisplay(terminal, interactive=True)
    display.show(Status(10, 4, 1, 3, 0.5, 65))
    assert (
        "srbench 4/10 cells done" in terminal.file.getvalue()
        and "1m05s" in terminal.file.getvalue()
    )
    display.clear()
    text = terminal.file.getvalue()
    assert text.endswith("\b" * len(display.shown or "x") or "\b")
    terminal._tw.write(".")
    assert terminal._tw.width_of_current_line == 5  # pytest's line bookkeeping is untouched


def test_log_mode_writes_whole_lines_only_when_due():
    terminal = Terminal()
    display = ProgressDisplay(terminal, interactive=False)
    assert not display.due()
    display.last = 0.0
    assert display.due()
    display.show(Status(10, 4, 1, 3, 0.5, 5))
    assert terminal.file.getvalue().endswith("known spend · 0m05s\n")
    assert not display.due()
