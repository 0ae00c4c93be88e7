"""A report's cells in a temporary file: rendered once, read back as a sequence of dicts (as
often as wanted) and as the report file's text."""

import pytest

from pytest_srbench.render.cells_file import READ_CELLS, CellsFile
from pytest_srbench.render.json_report import cell_text


def cell(index: int) -> dict:
    return {"case_id": f"b/{index}", "target_id": "t", "benchmark": "b", "status": "completed",
            "correct": index % 2 == 0, "answer": "é" * (index % 5), "answer_status": None,
            "error": None, "latency_s": index / 10, "ttft_s": None, "cost_usd": None,
            "embedding": None}  # fmt: skip


def test_cells_read_back_as_written_in_order_and_by_index():
    cells = [cell(i) for i in range(2 * READ_CELLS + 7)]
    spooled = CellsFile()
    for item in cells:
        spooled.append(item)
    assert len(spooled) == len(cells)
    assert list(spooled) == cells and list(spooled) == cells  # read twice
    assert spooled == cells and spooled != cells[:-1]
    assert spooled[0] == cells[0] and spooled[-1] == cells[-1] and spooled[3:6] == cells[3:6]
    assert list(spooled.texts()) == [cell_text(item) for item in cells]
    with pytest.raises(IndexError):
        spooled[len(cells)]
    spooled.append(cell(9999))  # appending after reading
    assert spooled[-1]["case_id"] == "b/9999" and len(spooled) == len(cells) + 1
    spooled.close()


def test_an_empty_cells_file_is_an_empty_sequence():
    assert list(CellsFile()) == [] and len(CellsFile()) == 0 and not CellsFile()
