"""lm-eval and inspect-ai driven against our simulator, each from a throwaway virtual
environment (``.cache/bench-peers``) so that neither becomes a dependency of ours; each is
timed like ours, from spawn to exit, beside its own evaluation call."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from _workload import Workload, child_env, reported_wall, run_command, start_endpoint

PEERS = ("lm-eval", "inspect-ai")
VENV = Path(__file__).resolve().parents[1] / ".cache" / "bench-peers"
PACKAGES = ["lm-eval[api]", "inspect-ai", "openai"]

LM_EVAL = r'''
import json, os, sys, tempfile, time
n, c, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "mc.jsonl"), "w") as f:
    for i in range(n):
        f.write(json.dumps({"question": f"Question {i}: which letter comes first?\nA) a\nB) b\nC) c\nD) d", "answer": "A"}) + "\n")
with open(os.path.join(folder, "mockmc.yaml"), "w") as f:
    f.write(f"""task: mockmc
dataset_path: json
dataset_name: null
dataset_kwargs:
  data_files:
    test: {folder}/mc.jsonl
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}\\nAnswer with 'ANSWER: X'."
doc_to_target: "{{{{answer}}}}"
generation_kwargs: {{until: [], max_gen_toks: 256, do_sample: false}}
filter_list:
  - name: strict
    filter:
      - {{function: regex, regex_pattern: "ANSWER: ([A-D])"}}
      - {{function: take_first}}
metric_list:
  - {{metric: exact_match, aggregation: mean, higher_is_better: true}}
""")
import lm_eval
from lm_eval.tasks import TaskManager
args = f"model=bench,base_url={url}/chat/completions,num_concurrent={c},max_retries=1,tokenized_requests=False"
started = time.perf_counter()
lm_eval.simple_evaluate(model="local-chat-completions", model_args=args, tasks=["mockmc"],
                        task_manager=TaskManager(include_path=folder), apply_chat_template=True, log_samples=False)
print(json.dumps({"wall_s": time.perf_counter() - started}))
'''

INSPECT = r"""
import json, os, sys, tempfile, time
n, c, url = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
os.environ.update(LOCAL_BASE_URL=url, LOCAL_API_KEY="dummy", INSPECT_LOG_DIR=tempfile.mkdtemp())
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice
samples = [Sample(input=f"Question {i}: which letter comes first in the alphabet?", choices=["a", "b", "c", "d"], target="A", id=i) for i in range(n)]
task = Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
started = time.perf_counter()
eval(task, model="openai-api/local/bench", max_connections=c, display="none", log_realtime=False)
print(json.dumps({"wall_s": time.perf_counter() - started}))
"""


def ensure_venv() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES], check=True)
    return python


@dataclass
class PeerRun:
    wall_s: float  # its evaluation call (as the peer's own script times it)
    process_s: float  # the whole command: interpreter, imports, data set-up, evaluation, exit
    cpu_s: float
    peak_rss_mb: float


def run_peer(peer: str, workload: Workload, base_url: str | None = None) -> PeerRun:
    """The peer's evaluation against ``base_url`` (or a fresh simulator), timed like ours: its
    evaluation call, and the whole command from spawn to exit (its set-up included)."""
    python = ensure_venv()
    script = LM_EVAL if peer == "lm-eval" else INSPECT
    sim = start_endpoint(workload) if base_url is None else None
    url = sim.base_url if sim is not None else str(base_url)
    env = child_env(
        None, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false"
    )
    env.pop("PYTHONPATH", None)  # the peer's own environment, not our source tree
    try:
        done = run_command(
            [str(python), "-c", script, str(workload.cells), str(workload.concurrency), url],
            cwd=VENV, env=env,
        )  # fmt: skip
    finally:
        if sim is not None:
            sim.stop()
    wall = reported_wall(done, peer)
    return PeerRun(wall, done.seconds, done.cpu_s, done.peak_rss_mb)
