"""``srbench finalize RUN``: refused while a shard lives, then ends the run and writes its
report (a real store, a real live process, the command as a user runs it)."""

from __future__ import annotations

import json
import subprocess
import sys

from pytest_srbench.app.shards import claim_shard, finish_shard
from pytest_srbench.cli.main import main
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.store import open_store
from pytest_srbench.store.liveness import this_process
from tests.core.helpers import case, manifest, target


def srbench(capsys, store, *args: str) -> tuple[int, str, str]:
    code = main(["--store", str(store), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_finalize_waits_for_live_shards_then_writes_the_report(tmp_path, capsys):
    store = open_store(tmp_path / "store")
    plan = manifest([case("mmlu-pro", str(i)) for i in range(4)], [target("t")])
    run, _ = store.create_run("run-s", plan, request_key="k")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        owner = {**this_process(), "pid": sleeper.pid, "process_started": None}
        for k in (1, 2):
            claim_shard(store, run.id, ShardSpec(k, 2), owner if k == 1 else this_process(), plan)
        finish_shard(store, run.id, ShardSpec(2, 2), this_process(), interrupted=False)
        code, _, err = srbench(capsys, tmp_path / "store", "finalize", run.id)
        assert code == 2
        assert f"run-s still has live shards: shard 1/2 (pid {sleeper.pid} on" in err
    finally:
        sleeper.kill()
        sleeper.wait()
    code, out, err = srbench(capsys, tmp_path / "store", "finalize", run.id, "--json",
                             str(tmp_path / "r.json"))  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["status"] == "interrupted" and "lost: shard 1/2" in report["error"]
    assert [s["state"] for s in report["provenance"]["shards"]] == ["interrupted", "finished"]
    assert f"run {run.id} · interrupted" in out
