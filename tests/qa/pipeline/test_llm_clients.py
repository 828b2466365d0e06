"""LLM clients tested at the HTTP boundary against a local fake server: never a live call."""

from __future__ import annotations

import json
import sys
import threading
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from qa.pipeline.llm import GroqLLM, LlamaCppLLM, LLMError, LLMUnavailable, OpenAICompatibleLLM, build_llm

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


# --- llama.cpp --------------------------------------------------------------


def test_llama_cpp_missing_package_gives_install_hint(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    with pytest.raises(LLMError, match="llama-cpp-python"):
        LlamaCppLLM(tmp_path / "model.gguf")


class FakeLlama:
    instances: list[FakeLlama] = []

    def __init__(self, model_path, **options):
        self.model_path = model_path
        self.options = options
        self.calls = []
        FakeLlama.instances.append(self)

    def create_chat_completion(self, messages, temperature, max_tokens):
        self.calls.append({"messages": messages, "temperature": temperature, "max_tokens": max_tokens})
        return {"choices": [{"message": {"role": "assistant", "content": "local answer [1]"}}]}


@pytest.fixture
def fake_llama_cpp(monkeypatch):
    FakeLlama.instances = []
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return module


def test_llama_cpp_missing_model_file_names_the_path(fake_llama_cpp, tmp_path):
    missing = tmp_path / "absent.gguf"
    with pytest.raises(LLMError, match="absent.gguf"):
        LlamaCppLLM(missing)


def test_llama_cpp_loads_lazily_once_and_passes_temperature(fake_llama_cpp, tmp_path):
    model_file = tmp_path / "qwen.gguf"
    model_file.write_bytes(b"GGUF")
    llm = LlamaCppLLM(model_file, n_ctx=2048)
    assert FakeLlama.instances == []  # nothing loaded until the first call
    assert llm.complete(MESSAGES, temperature=0.0, max_tokens=50) == "local answer [1]"
    llm.complete(MESSAGES)
    assert len(FakeLlama.instances) == 1
    call = FakeLlama.instances[0].calls[0]
    assert call == {"messages": MESSAGES, "temperature": 0.0, "max_tokens": 50}
    assert FakeLlama.instances[0].options["n_ctx"] == 2048


def test_build_llm_rejects_unknown_provider():
    with pytest.raises(LLMError, match="unknown LLM provider"):
        build_llm("telepathy")
    assert isinstance(build_llm("openai", base_url="http://127.0.0.1:9/v1", model="m"), OpenAICompatibleLLM)
