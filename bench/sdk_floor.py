"""The openai SDK's own CPU per call, beside the configured target's whole command, measured
side by side: the floor under issue 48's goal for a marked test that calls the SDK through
``srbench_client`` (that route's CPU <= 1.3 x the same cases through a configured target).

Each rep runs, one after the other:

- ``configured``: pytest-srbench on N cells through a configured target against a running
  simulator (``bench/overhead.py``'s shipped-suite row), CPU of the whole command;
- ``sdk alone``: a process that makes the same number of ``chat.completions.create`` calls
  through ``openai.AsyncOpenAI`` on an httpx transport that answers each at once, in the
  process, with a canned completion (non-streaming and streamed: three chunks and usage),
  64 at a time: the SDK's request building and response parsing and nothing else — no
  network, no journal, no grading, no pytest. Its CPU is taken around the calls only
  (``getrusage``), so the interpreter's start and the SDK's import are not counted.

A marked test that calls the SDK still has every cell journaled, streamed and graded by the
engine as the configured target's cells are, so its command costs at least the configured
command plus the SDK's own work; the printed bound is ``(configured + N x sdk) / configured``.

    python bench/sdk_floor.py [--cells 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _user_venv import user_python
from _workload import PYTHON, Workload, make_project, run_pytest, start_endpoint, use_python

# The SDK's side: run in the measured interpreter (the user environment, with openai).
SDK_ALONE = r"""
import asyncio, json, resource, sys
import httpx, openai

def chunk(delta, finish=None, usage=None):
    out = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "bench",
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        out["usage"] = usage
    return b"data: " + json.dumps(out).encode() + b"\n\n"

USAGE = {"prompt_tokens": 40, "completion_tokens": 6, "total_tokens": 46}
PLAIN = json.dumps({"id": "c1", "object": "chat.completion", "created": 1, "model": "bench",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "The answer is B."},
                 "finish_reason": "stop"}], "usage": USAGE}).encode()
STREAM = (chunk({"role": "assistant", "content": ""}) + chunk({"content": "The answer is B."})
          + chunk({}, "stop", USAGE) + b"data: [DONE]\n\n")

class AnswerAtOnce(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request):
        await request.aread()
        streamed = json.loads(request.content).get("stream")
        kind = "text/event-stream" if streamed else "application/json"
        return httpx.Response(200, content=STREAM if streamed else PLAIN,
                              headers={"content-type": kind})

async def calls(n, streamed):
    client = openai.AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1",
                                http_client=httpx.AsyncClient(transport=AnswerAtOnce()))
    messages = [{"role": "user", "content": "Benchmark question number 1: which option is right?"}]
    async def one():
        if streamed:
            stream = await client.chat.completions.create(
                model="bench", messages=messages, stream=True,
                stream_options={"include_usage": True})
            async for _ in stream:
                pass
        else:
            await client.chat.completions.create(model="bench", messages=messages)
    await one()  # first-call set-up outside the count
    slots = asyncio.Semaphore(64)
    async def guarded():
        async with slots:
            await one()
    before = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.gather(*(guarded() for _ in range(n)))
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

n = int(sys.argv[1])
print(json.dumps({"plain": asyncio.run(calls(n, False)), "stream": asyncio.run(calls(n, True)),
                  "openai": openai.__version__, "httpx": httpx.__version__}))
"""


def sdk_alone(cells: int) -> dict[str, float | str]:
    done = subprocess.run(
        [PYTHON[0], "-c", SDK_ALONE, str(cells)], capture_output=True, text=True, check=True
    )
    found: dict[str, float | str] = json.loads(done.stdout)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dev-env", action="store_true", help="this interpreter, not the user's")
    args = parser.parse_args()
    if not args.dev_env:
        use_python(user_python("openai"))
    workload = Workload(cells=args.cells, latency_s=0.0, chunks=1, concurrency=64)
    endpoint = start_endpoint(workload)
    configured: list[float] = []
    plain: list[float] = []
    streamed: list[float] = []
    versions = ""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            project = make_project(Path(scratch) / "project", workload, endpoint.base_url)
            for rep in range(args.repeat):
                run = run_pytest(project, workload)
                if run.cells != args.cells:
                    raise RuntimeError(f"the configured run journaled {run.cells} cells")
                configured.append(run.cpu_s)
                sdk = sdk_alone(args.cells)
                plain.append(float(sdk["plain"]))
                streamed.append(float(sdk["stream"]))
                versions = f"openai {sdk['openai']}, httpx {sdk['httpx']}"
                print(f"rep {rep + 1}: configured {run.cpu_s:.2f} s CPU; SDK alone "
                      f"{sdk['plain']:.2f} s plain, {sdk['stream']:.2f} s streamed",
                      flush=True)  # fmt: skip
    finally:
        endpoint.stop()
    load = os.getloadavg()[0]
    base, per_plain, per_stream = (statistics.median(x) for x in (configured, plain, streamed))
    n = args.cells
    print(f"\n{n} cells, L=0, C=64, medians of {args.repeat} ({versions}; load {load:.1f}):")
    print(f"  configured target, whole command: {base:.2f} s CPU ({base / n * 1000:.2f} ms a cell)")
    for label, spent in (("plain", per_plain), ("streamed", per_stream)):
        print(f"  openai SDK alone, {label}: {spent:.2f} s CPU ({spent / n * 1000:.2f} ms a call)"
              f" -> the SDK route is at least {(base + spent) / base:.2f} x the configured target")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
