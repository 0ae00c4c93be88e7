"""`srbench datasets fetch` against a real local server speaking the Hub's API and GitHub's
archives (tests/datasets/fakehub.py), serving small files in each release's real format."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_srbench.cli.main import main
from pytest_srbench.datasets.fetch import FetchRequest, fetch_all
from pytest_srbench.datasets.fetchlock import read_lock
from pytest_srbench.datasets.sources import RELEASES
from pytest_srbench.datasets.suites import load_suite
from tests.datasets.fakehub import TOKEN, FakeHub, Server, hub_env
from tests.datasets.releases import TEST_DATA_H5, publish, release_files
from tests.optional import import_extra

# loaded before any test sets HF_* variables (the module skips without the extra)
import_extra("huggingface_hub.hf_api", "fetch")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeHub]:
    hub = FakeHub()
    running = Server(hub)
    hub.tokens_with_access.add(TOKEN)
    publish(hub)
    try:
        yield hub
    finally:
        running.stop()


@pytest.fixture
def env(server: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The fetch environment for the CLI (set in os.environ) and for fetch_all."""
    values = hub_env(server, tmp_path)
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    server.drops.clear()
    server.ignore_range.clear()
    server.clear()  # the module's server is shared: a test sees only its own requests
    return values


def fetch(*args: str) -> int:
    return main(["datasets", "fetch", *args])


def served(key: str, path: str) -> bytes:
    return release_files()[key][2][path]


@pytest.fixture(scope="module")
def everything(server: FakeHub, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All nine releases fetched whole once (with a token that accepted the gated terms)."""
    root = tmp_path_factory.mktemp("all")
    summaries, failures = fetch_all(
        FetchRequest(benchmarks=tuple(RELEASES), revisions={"*": "main"}, out=root / "suites"),
        env=hub_env(server, root, HF_TOKEN=TOKEN),
        log=lambda line: None,
    )
    assert failures == []
    assert [s.benchmark for s in summaries] == list(RELEASES)
    return root / "suites"


# ---------------------------------------------------------------- every release, real format


EXPECTED_ROWS = {"mmlu-pro": 16, "gpqa-diamond": 5, "simpleqa-verified": 6, "hle": 5,
                 "arc-agi-2": 3, "livecodebench": 3, "scicode": 2, "terminal-bench-2.1": 2,
                 "tau3": 4}  # fmt: skip


@pytest.mark.parametrize("benchmark", list(RELEASES))
def test_each_release_is_fetched_pinned_and_converted(everything, server, benchmark):
    suite = load_suite(everything / benchmark)
    lock = read_lock(everything / "fetch-lock.json")
    pin = lock[benchmark]
    host, repo, files = release_files()[benchmark]
    assert len(suite.rows) == EXPECTED_ROWS[benchmark]
    assert len(pin.revision) == 40 and pin.repo == repo and pin.host == host
    assert suite.meta["revision"] == pin.revision
    origin = suite.meta["origin"]
    assert origin["kind"] == "released" and origin["via"] == "srbench datasets fetch"
    assert origin["revision"] == pin.revision
    assert origin["source"] == RELEASES[benchmark].main.home
    assert origin["endpoint"] == (server.url if host == "huggingface" else server.url + "/codeload")
    # every taken file's hash is the hash of the bytes the server holds, in the lock and suite
    assert origin["files"] == pin.files
    assert pin.files == {p: hashlib.sha256(files[p]).hexdigest() for p in pin.files}
    assert all(RELEASES[benchmark].main.patterns for _ in pin.files)


def test_mmlu_pro_parquet_keeps_its_list_column_and_letters(everything):
    rows = [row for _, row in load_suite(everything / "mmlu-pro").rows]
    first = rows[0]
    assert first["question_id"] == "7000" and len(first["options"]) == 10
    assert first["answer"] == "A" and first["category"] == "math"
    assert read_lock(everything / "fetch-lock.json")["mmlu-pro"].files.keys() == {
        "data/test-00000-of-00001.parquet"  # the validation split is not taken
    }


def test_hle_parquet_drops_the_image_row_and_keeps_text_rows(everything):
    suite = load_suite(everything / "hle")
    assert suite.meta["dropped"] == {"image": 1}
    assert {row["id"] for _, row in suite.rows} == {f"hle{n:04d}" for n in range(5)}


def test_scicode_keeps_step_numbers_and_tests_and_ships_the_targets(everything):
    suite = load_suite(everything / "scicode")  # verifies assets/test_data.h5 by its sha256
    row = suite.rows[0][1]
    assert [step["step_number"] for step in row["sub_steps"]] == ["11.1", "11.2"]
    assert row["sub_steps"][1]["tests"] == ["assert f2(1) == 3", "assert f2(0) == target"]
    assert (everything / "scicode" / "assets" / "test_data.h5").read_bytes() == TEST_DATA_H5
    digest = hashlib.sha256(TEST_DATA_H5).hexdigest()
    assert suite.meta["assets"] == {"assets/test_data.h5": digest}
    targets = suite.meta["origin"]["assets"]["assets/test_data.h5"]
    assert targets["files"] == {"test_data.h5": digest}
    assert (
        targets["revision"] == read_lock(everything / "fetch-lock.json")["scicode-targets"].revision
    )


def test_livecodebench_reads_every_release_file_and_unpacks_private_tests(everything):
    rows = {row["question_id"]: row for _, row in load_suite(everything / "livecodebench").rows}
    assert set(rows) == {"abc301_a", "abc302_a", "abc303_a"}
    assert rows["abc301_a"]["tests"][1] == {"input": "2\n", "output": "4\n", "testtype": "stdin"}
    assert rows["abc303_a"]["func_name"] == "add"


def test_github_releases_take_only_their_patterns(everything):
    lock = read_lock(everything / "fetch-lock.json")
    assert sorted(lock["arc-agi-2"].files) == [
        f"data/evaluation/{n:08x}.json" for n in (0xA1, 0xB2, 0xC3)
    ]
    assert not any("/solution/" in path for path in lock["terminal-bench-2.1"].files)
    assert "src/tau2/domains/airline/tools.py" in lock["tau3"].files
    task = load_suite(everything / "terminal-bench-2.1").rows[0][1]
    assert task["container"]["dockerfile"].startswith("FROM ubuntu")  # runs in its container
    assert task["container"]["context"]["notes.txt"] == "seed file\n"
    assert "grep -q done" in task["verifier"]
    tau = load_suite(everything / "tau3").rows[0][1]
    assert tau["tools"] == ["calculate", "get_user_details"]  # READ + GENERIC from tools.py
    assert tau["user_guidelines"].startswith("# Fixture guidelines")


def test_gated_suites_are_kept_out_of_version_control(everything):
    for benchmark in ("gpqa-diamond", "hle"):
        assert (everything / benchmark / ".gitignore").read_text().splitlines()[-1] == "*"
    assert not (everything / "mmlu-pro" / ".gitignore").exists()


# ---------------------------------------------------------------- pins, cache and lock


def test_a_second_fetch_of_the_pinned_revisions_makes_no_request(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    env_all = {**env, "HF_TOKEN": TOKEN}
    first, failures = fetch_all(
        FetchRequest(tuple(RELEASES), {"*": "main"}, out=out), env=env_all, log=lambda _: None
    )
    assert failures == [] and all(s.downloads for s in first)
    before = {b: (out / b / "cases.jsonl").read_bytes() for b in RELEASES}
    server.clear()
    assert fetch("--out", str(out)) == 0  # no --revision: the lock's commits
    assert server.paths() == []
    assert {b: (out / b / "cases.jsonl").read_bytes() for b in RELEASES} == before
    printed = capsys.readouterr().out
    assert "(0 downloaded, 1 from the cache)" in printed and "from the cached archive" in printed


def test_offline_rerun_from_the_caches_with_zero_requests(server, env, tmp_path, monkeypatch):
    out = tmp_path / "suites"
    assert fetch("mmlu-pro", "arc-agi-2", "--revision", "main", "--out", str(out)) == 0
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    shutil.copy(out / "fetch-lock.json", elsewhere / "fetch-lock.json")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    server.clear()
    assert fetch("mmlu-pro", "arc-agi-2", "--profile", "smoke", "--out", str(elsewhere)) == 0
    assert server.paths() == []
    assert len(load_suite(elsewhere / "mmlu-pro.smoke").rows) == 14
    assert len(load_suite(elsewhere / "arc-agi-2.smoke").rows) == 2


def test_offline_without_the_files_says_so(server, env, tmp_path, monkeypatch, capsys):
    out = tmp_path / "suites"
    assert fetch("mmlu-pro", "--revision", "main", "--out", str(out)) == 0
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    server.clear()
    assert fetch("mmlu-pro", "--out", str(out)) == 2
    assert "is not in the Hugging Face cache" in capsys.readouterr().err
    assert server.paths() == []


def test_a_moving_branch_is_refused_unless_revision_is_explicit(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    server.clear()
    assert fetch("mmlu-pro", "arc-agi-2", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert "mmlu-pro: no pinned revision of TIGER-Lab/MMLU-Pro" in err
    assert "Pass --revision main" in err and "arc-agi-2: no pinned revision" in err
    assert server.paths() == [] and not out.joinpath("mmlu-pro").exists()


def test_an_explicit_branch_is_resolved_recorded_and_then_pinned(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    repo = server.datasets["TIGER-Lab/MMLU-Pro"]
    old = repo.refs["main"]
    assert fetch("mmlu-pro", "--revision", "main", "--out", str(out)) == 0
    assert f"revision 'main' of TIGER-Lab/MMLU-Pro is commit {old}" in capsys.readouterr().out
    assert read_lock(out / "fetch-lock.json")["mmlu-pro"].revision == old
    files = dict(repo.commits[old])
    files["data/test-00000-of-00001.parquet"] = release_files()["mmlu-pro"][2][
        "data/validation-00000-of-00001.parquet"
    ]
    new = repo.add_commit("mmlu-pro:moved", files)  # main moves on
    try:
        server.clear()
        assert fetch("mmlu-pro", "--out", str(out)) == 0  # still the pinned commit
        assert server.paths() == []
        assert load_suite(out / "mmlu-pro").meta["revision"] == old
        assert fetch("mmlu-pro", "--revision", "main", "--out", str(out)) == 0
        assert read_lock(out / "fetch-lock.json")["mmlu-pro"].revision == new
        assert len(load_suite(out / "mmlu-pro").rows) == 3
    finally:
        repo.refs["main"] = old
        del repo.commits[new]


def test_a_commit_id_is_used_as_is(server, env, tmp_path):
    commit = server.github["arcprize/ARC-AGI-2"].refs["main"]
    out = tmp_path / "suites"
    server.clear()
    assert fetch("arc-agi-2", "--revision", f"arc-agi-2={commit}", "--out", str(out)) == 0
    assert server.paths() == [f"/codeload/arcprize/ARC-AGI-2/tar.gz/{commit}"]
    assert load_suite(out / "arc-agi-2").meta["origin"]["revision"] == commit


@pytest.mark.parametrize("benchmark", ["mmlu-pro", "tau3"])
def test_a_file_whose_hash_differs_from_the_lock_is_refused(server, env, tmp_path, capsys,
                                                            benchmark):  # fmt: skip
    out = tmp_path / "suites"
    assert fetch(benchmark, "--revision", "main", "--out", str(out)) == 0
    lock_file = out / "fetch-lock.json"
    document = json.loads(lock_file.read_text())
    name = sorted(document["sources"][benchmark]["files"])[0]
    document["sources"][benchmark]["files"][name] = "0" * 64
    lock_file.write_text(json.dumps(document))
    before = (out / benchmark / "suite.json").read_bytes()
    capsys.readouterr()
    assert fetch(benchmark, "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"{name} at" in err and f"but {lock_file} records {'0' * 64}" in err
    assert f"srbench datasets fetch {benchmark} --revision " in err
    assert (out / benchmark / "suite.json").read_bytes() == before  # nothing written
    assert fetch(benchmark, "--revision", "main", "--out", str(out)) == 0  # explicit: recorded
    assert read_lock(lock_file)[benchmark].files[name] != "0" * 64


# ---------------------------------------------------------------- gated sets


def test_a_gated_set_without_a_token_says_what_to_do(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    server.clear()
    assert fetch("gpqa-diamond", "--revision", "main", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"log in at {server.url}/datasets/Idavidrein/gpqa, accept its terms" in err
    assert "export HF_TOKEN=" in err
    assert not any("/resolve/" in path for path in server.paths())  # no file was asked for
    assert not (out / "gpqa-diamond").exists()


def test_a_token_without_accepted_terms_gets_the_same_advice(server, env, tmp_path, capsys,
                                                             monkeypatch):  # fmt: skip
    monkeypatch.setenv("HF_TOKEN", "hf_fixture_token_without_access")
    assert fetch("hle", "--revision", "main", "--out", str(tmp_path / "suites")) == 2
    err = capsys.readouterr().err
    assert "cais/hle is gated on the Hugging Face Hub" in err and "accept its terms" in err
    assert "hf_fixture_token_without_access" not in err


def test_other_benchmarks_are_fetched_when_a_gated_one_fails(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    assert fetch("gpqa-diamond", "simpleqa-verified", "--revision", "main", "--out", str(out)) == 2
    assert load_suite(out / "simpleqa-verified").meta["origin"]["kind"] == "released"
    assert set(read_lock(out / "fetch-lock.json")) == {"simpleqa-verified"}


# ---------------------------------------------------------------- interrupted downloads


def test_an_interrupted_hub_download_is_taken_again_cleanly(server, env, tmp_path):
    data = served("mmlu-pro", "data/test-00000-of-00001.parquet")
    cdn = f"/cdn/{hashlib.sha256(data).hexdigest()}"
    server.drops[cdn] = (1000, 1)
    out = tmp_path / "suites"
    assert fetch("mmlu-pro", "--revision", "main", "--out", str(out)) == 0
    # huggingface_hub asks again (with a Range from the bytes it kept, none here: the
    # connection dropped inside its first 10 MB chunk) and the file is whole
    assert [path for path in server.paths() if path == cdn] == [cdn, cdn]
    assert (
        read_lock(out / "fetch-lock.json")["mmlu-pro"].files["data/test-00000-of-00001.parquet"]
        == hashlib.sha256(data).hexdigest()
    )
    assert not list((tmp_path / "hf").rglob("*.incomplete"))


@pytest.mark.parametrize("ranges", [True, False], ids=["resumed", "restarted"])
def test_an_interrupted_archive_download_is_resumed_or_restarted(server, env, tmp_path, ranges):
    commit = server.github["arcprize/ARC-AGI-2"].refs["main"]
    path = f"/codeload/arcprize/ARC-AGI-2/tar.gz/{commit}"
    server.drops[path] = (200, 1)
    if not ranges:
        server.ignore_range.add(path)
    server.clear()
    assert fetch("arc-agi-2", "--revision", commit, "--out", str(tmp_path / "suites")) == 0
    asked = [ranged for _, p, ranged in server.requests if p == path]
    assert asked == ["", "bytes=200-"]
    cache = tmp_path / "cache" / "github" / "arcprize" / "ARC-AGI-2"
    assert [p.name for p in cache.iterdir()] == [f"{commit}.tar.gz"]
    assert len(load_suite(tmp_path / "suites" / "arc-agi-2").rows) == 3


def test_an_archive_that_never_arrives_leaves_no_file(server, env, tmp_path, capsys):
    commit = server.github["arcprize/ARC-AGI-2"].refs["main"]
    path = f"/codeload/arcprize/ARC-AGI-2/tar.gz/{commit}"
    server.drops[path] = (100, 3)
    server.ignore_range.add(path)
    assert fetch("arc-agi-2", "--revision", commit, "--out", str(tmp_path / "suites")) == 2
    assert "download failed after 3 attempts" in capsys.readouterr().err
    cache = tmp_path / "cache" / "github" / "arcprize" / "ARC-AGI-2"
    assert list(cache.iterdir()) == []
    server.drops.clear()
    assert fetch("arc-agi-2", "--revision", commit, "--out", str(tmp_path / "suites")) == 0


# ---------------------------------------------------------------- profiles and arguments


def test_a_profile_writes_the_prepared_suite_with_its_origin(server, env, tmp_path):
    out = tmp_path / "suites"
    assert fetch("mmlu-pro", "--profile", "smoke", "--seed", "7", "--revision", "main",
                 "--out", str(out)) == 0  # fmt: skip
    suite = load_suite(out / "mmlu-pro.smoke")
    assert len(suite.rows) == 14 and suite.meta["prepared"]["seed"] == 7
    assert suite.meta["prepared"]["source_files"] == [
        {"name": "data/test-00000-of-00001.parquet",
         "sha256": read_lock(out / "fetch-lock.json")["mmlu-pro"].files[
             "data/test-00000-of-00001.parquet"]}
    ]  # fmt: skip
    assert suite.meta["origin"]["kind"] == "released"
    assert not (out / "mmlu-pro").exists()


def test_a_shortfall_for_the_profile_names_the_benchmark(server, env, tmp_path, capsys):
    assert fetch("scicode", "--profile", "quick", "--revision", "main",
                 "--out", str(tmp_path / "suites")) == 2  # fmt: skip
    assert "scicode: profile 'quick' needs 3 rows" in capsys.readouterr().err


def test_a_whole_fetch_replaces_a_synthetic_suite_and_says_so(server, env, tmp_path, capsys):
    out = tmp_path / "suites"
    assert main(["datasets", "synth", "--profile", "quick", "--benchmark", "arc-agi-2",
                 "--out", str(out)]) == 0  # fmt: skip
    capsys.readouterr()
    assert fetch("arc-agi-2", "--revision", "main", "--out", str(out)) == 0
    assert "replaced: " in capsys.readouterr().out
    assert load_suite(out / "arc-agi-2").meta["origin"]["kind"] == "released"
    # and synth --force does not overwrite released data
    assert main(["datasets", "synth", "--profile", "quick", "--benchmark", "arc-agi-2",
                 "--out", str(out), "--force"]) == 2  # fmt: skip
    assert "holds released data" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mmlu"], "no canonical source is known for mmlu"),
        (["mmlu-pro", "--revision", "nosuch=main"], "'nosuch' is no source key"),
        (["mmlu-pro", "--revision", "main", "--revision", "dev"], "--revision given twice"),
    ],
)
def test_bad_arguments_are_refused_before_any_request(server, env, capsys, args, message):
    server.clear()
    assert fetch(*args) == 2
    assert message in capsys.readouterr().err
    assert server.paths() == []


def test_an_unknown_branch_is_reported(server, env, tmp_path, capsys):
    assert fetch("mmlu-pro", "--revision", "no-such-branch", "--out", str(tmp_path)) == 2
    assert "TIGER-Lab/MMLU-Pro has no revision 'no-such-branch'" in capsys.readouterr().err
    assert fetch("arc-agi-2", "--revision", "no-such-branch", "--out", str(tmp_path)) == 2
    assert "arcprize/ARC-AGI-2 has no branch, tag or commit 'no-such-branch'" in (
        capsys.readouterr().err
    )


def test_a_whole_fetch_of_another_revision_points_at_a_prepared_suite_that_still_wins(
    server, env, tmp_path, capsys
):
    out = tmp_path / "suites"
    repo = server.github["arcprize/ARC-AGI-2"]
    old = repo.refs["main"]
    assert fetch("arc-agi-2", "--profile", "smoke", "--revision", old, "--out", str(out)) == 0
    new = repo.add_commit("arc:moved", dict(repo.commits[old]), ref=None)
    try:
        capsys.readouterr()
        assert fetch("arc-agi-2", "--revision", new, "--out", str(out)) == 0
        printed = capsys.readouterr().out
        assert f"note: {out / 'arc-agi-2.smoke'} (prepared for smoke from another revision)" in (
            printed
        )
        assert fetch("arc-agi-2", "--revision", new, "--profile", "smoke", "--out", str(out)) == 0
        assert fetch("arc-agi-2", "--out", str(out)) == 0
        assert "note:" not in capsys.readouterr().out
    finally:
        del repo.commits[new]
