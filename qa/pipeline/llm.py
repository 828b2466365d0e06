"""LLM clients that satisfy ``protocols.LLM``: Groq, any OpenAI-compatible server, llama.cpp.

Every failure leaves as ``LLMError`` (or its subclass ``LLMUnavailable`` when the
service cannot be used right now), so callers catch one family. Transient
failures (``retryable``) are retried inside the client, with backoff; what still
fails ends the question's stage as failed, with the message (Celery tasks do not
retry). Messages never contain the API key:
SDK and server messages are redacted and truncated before they are raised.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

GROQ_DEFAULT_MODEL = "llama-3.1-8b-instant"
_MESSAGE_LIMIT = 300


class LLMError(RuntimeError):
    """The LLM call failed; ``retryable`` says whether trying again later may help."""

    default_retryable = False

    def __init__(self, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.retryable = self.default_retryable if retryable is None else retryable


class LLMUnavailable(LLMError):
    """The service could not be used: unreachable, timed out, rate-limited or refusing our key."""

    default_retryable = True


def _clean(text: object, secret: str | None) -> str:
    message = " ".join(str(text).split())
    if secret:
        message = message.replace(secret, "[redacted]")
    return message[:_MESSAGE_LIMIT]


def _content_of(payload: Any, provider: str) -> str:
    """The first choice's message text from an OpenAI-shaped response (dict or SDK object)."""
    try:
        if isinstance(payload, dict):
            content = payload["choices"][0]["message"].get("content")
        else:
            content = payload.choices[0].message.content
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise LLMError(f"{provider} returned a malformed chat completion (no choices[0].message)") from exc
    if content is not None and not isinstance(content, str):
        raise LLMError(f"{provider} returned a non-text message content")
    return content or ""


class GroqLLM:
    """Groq's hosted models through the ``groq`` SDK (which retries 429/5xx itself)."""

    def __init__(
        self,
        *,
        api_key: str,
        model: str = GROQ_DEFAULT_MODEL,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 2,
    ) -> None:
        if not api_key:
            raise LLMUnavailable("no Groq API key configured (set GROQ_API_KEY)", retryable=False)
        try:
            import groq
        except ImportError as exc:  # pragma: no cover - groq is a project requirement
            raise LLMError("the 'groq' package is not installed: pip install groq") from exc
        self._groq = groq
        self._secret = api_key
        self.model = model
        self.name = f"groq:{model}"
        self._client = groq.Groq(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries)

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> str:
        groq = self._groq
        try:
            response = self._client.chat.completions.create(
                model=self.model, messages=list(messages), temperature=temperature, max_tokens=max_tokens
            )
        except (groq.AuthenticationError, groq.PermissionDeniedError) as exc:
            raise LLMUnavailable(
                f"Groq rejected the API key (HTTP {exc.status_code}): {_clean(exc.message, self._secret)}",
                retryable=False,
            ) from None
        except (groq.RateLimitError, groq.InternalServerError) as exc:
            raise LLMUnavailable(
                f"Groq is unavailable (HTTP {exc.status_code}): {_clean(exc.message, self._secret)}"
            ) from None
        except groq.APIConnectionError as exc:  # includes APITimeoutError
            raise LLMUnavailable(f"cannot reach Groq: {_clean(exc.message, self._secret)}") from None
        except groq.APIStatusError as exc:
            raise LLMError(
                f"Groq refused the request (HTTP {exc.status_code}): {_clean(exc.message, self._secret)}"
            ) from None
        except (groq.APIError, ValueError) as exc:  # response validation, undecodable JSON
            raise LLMError(f"Groq returned a malformed response: {_clean(exc, self._secret)}") from None
        return _content_of(response, "Groq")


class OpenAICompatibleLLM:
    """Any ``/v1/chat/completions`` server (vLLM, Ollama, llama.cpp server, OpenAI) over httpx.

    ``base_url`` includes the version prefix, as in the OpenAI SDK:
    ``http://localhost:11434/v1``. Transient failures are retried here with
    exponential backoff because there is no SDK doing it for us.
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 2,
        retry_backoff_s: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai-compatible:{model}"
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._secret = api_key
        self._max_retries = max_retries
        self._backoff = retry_backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> str:
        body = {
            "model": self.model,
            "messages": list(messages),
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stream": False,
        }
        for attempt in range(self._max_retries + 1):
            try:
                return self._post(body)
            except LLMError as exc:
                if not exc.retryable or attempt == self._max_retries:
                    raise
                time.sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, body: dict) -> str:
        try:
            response = self._client.post(self._url, json=body)
        except httpx.TimeoutException:
            raise LLMUnavailable(f"{self.name} timed out at {self._url}") from None
        except httpx.HTTPError as exc:
            raise LLMUnavailable(f"cannot reach {self._url}: {_clean(exc, self._secret)}") from None
        status = response.status_code
        excerpt = _clean(response.text, self._secret)
        if status in (401, 403):
            raise LLMUnavailable(
                f"{self.name} rejected the credentials (HTTP {status}): {excerpt}", retryable=False
            )
        if status == 429 or status >= 500:
            raise LLMUnavailable(f"{self.name} is unavailable (HTTP {status}): {excerpt}")
        if status >= 400:
            raise LLMError(f"{self.name} refused the request (HTTP {status}): {excerpt}")
        try:
            payload = response.json()
        except ValueError:
            raise LLMError(f"{self.name} returned a response that is not JSON: {excerpt[:80]}") from None
        return _content_of(payload, self.name)


class LlamaCppLLM:
    """A local GGUF model through llama-cpp-python, imported only when this class is used.

    The model loads on first use, not in the constructor, so building the
    client is cheap; the constructor still checks that the package and the file
    exist so that misconfiguration fails at start-up with a readable message.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
    ) -> None:
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise LLMError(
                "the local GGUF provider needs llama-cpp-python, which is not installed: "
                "pip install llama-cpp-python==0.3.36 (it compiles from source, ~7 minutes)"
            ) from exc
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise LLMError(f"GGUF model file not found: {self.model_path}")
        self.name = f"llama-cpp:{self.model_path.name}"
        self._llama_class = Llama
        self._options = {"n_ctx": n_ctx, "n_threads": n_threads, "seed": seed, "verbose": verbose}
        self._model: Any = None
        # One Llama object holds one KV cache: concurrent calls would corrupt it.
        self._lock = threading.Lock()

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> str:
        with self._lock:
            if self._model is None:
                try:
                    self._model = self._llama_class(model_path=str(self.model_path), **self._options)
                except (ValueError, RuntimeError, OSError) as exc:
                    message = f"llama.cpp could not load {self.model_path}: {_clean(exc, None)}"
                    raise LLMError(message) from None
                # Free it before interpreter shutdown: llama-cpp-python's own finaliser
                # runs after its modules are torn down and prints a traceback.
                if hasattr(self._model, "close"):
                    atexit.register(self._model.close)
            try:
                result = self._model.create_chat_completion(
                    messages=list(messages), temperature=temperature, max_tokens=max_tokens
                )
            except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than n_ctx
                raise LLMError(f"llama.cpp failed: {_clean(exc, None)}") from None
        return _content_of(result, self.name)


def build_llm(provider: str, **options: Any):
    """Construct a client by provider name: "groq", "openai" (compatible) or "llama_cpp"."""
    factories = {"groq": GroqLLM, "openai": OpenAICompatibleLLM, "llama_cpp": LlamaCppLLM}
    try:
        factory = factories[provider]
    except KeyError:
        raise LLMError(f"unknown LLM provider {provider!r}; expected one of {sorted(factories)}") from None
    return factory(**options)
