"""LLM clients that satisfy ``protocols.LLM``: Groq, any OpenAI-compatible server, llama.cpp.

Besides ``complete``, each answers a yes/no question by probability
(``yes_probability``): one generated token, read from the server's token
log-probabilities rather than from its text, so a judge costs one short prompt.

Every failure leaves as ``LLMError`` (or its subclass ``LLMUnavailable`` when the
service cannot be used right now), so callers catch one family. Transient
failures (``retryable``) are retried inside the client, with backoff; what still
fails ends the question's stage as failed, with the message (Celery tasks do not
retry). Messages never contain the API key:
SDK and server messages are redacted and truncated before they are raised.
"""

from __future__ import annotations

import math
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


YES_TOKENS = frozenset({"yes"})
NO_TOKENS = frozenset({"no"})


def yes_probability_of(payload: Any, provider: str) -> float:
    """P(yes) / (P(yes) + P(no)) over the first generated token's top log-probabilities.

    Tokens count case- and space-insensitively ("Yes", " yes", "YES"). A side missing from
    the top list is given an upper bound of its own probability (the smallest listed, or the
    mass the list leaves over when that is less), so a reply sure of "yes" reads close to 1
    without dividing by zero. Raises ``LLMError`` when
    the server returned no log-probabilities (a server or model without them) or when
    neither yes nor no is among the top tokens (the model did not answer the question).
    """
    if not isinstance(payload, dict):
        payload = payload.model_dump() if hasattr(payload, "model_dump") else {}
    try:
        first = payload["choices"][0]["logprobs"]["content"][0]
        top = first.get("top_logprobs") or [first]
        ranked = [(str(t["token"]).strip().lower(), float(t["logprob"])) for t in top]
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        raise LLMError(
            f"{provider} returned no token log-probabilities (the server or model may not support "
            "logprobs/top_logprobs)"
        ) from None
    probabilities = [(token, math.exp(logprob)) for token, logprob in ranked]
    yes = sum(p for token, p in probabilities if token in YES_TOKENS)
    no = sum(p for token, p in probabilities if token in NO_TOKENS)
    if not yes and not no:
        shown = ", ".join(repr(token) for token, _ in ranked[:5])
        raise LLMError(f"{provider} answered neither yes nor no (top tokens: {shown})")
    listed = [p for _, p in probabilities]
    floor = max(min(min(listed), 1.0 - sum(listed)), 1e-12)
    yes, no = yes or floor, no or floor
    return yes / (yes + no)


def _yes_no_body(top_logprobs: int) -> dict[str, Any]:
    return {"temperature": 0.0, "max_tokens": 1, "logprobs": True, "top_logprobs": top_logprobs}


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
        response = self._create(messages, temperature=temperature, max_tokens=max_tokens)
        return _content_of(response, "Groq")

    def yes_probability(self, messages: Sequence[dict[str, str]], *, top_logprobs: int = 10) -> float:
        """Groq documents logprobs for some models only: the others fail here with LLMError."""
        return yes_probability_of(self._create(messages, **_yes_no_body(top_logprobs)), self.name)

    def _create(self, messages: Sequence[dict[str, str]], **options: Any) -> Any:
        groq = self._groq
        try:
            return self._client.chat.completions.create(model=self.model, messages=list(messages), **options)
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
        body = {"messages": list(messages), "temperature": temperature, "max_tokens": max_tokens}
        return _content_of(self._post_with_retries(body), self.name)

    def yes_probability(self, messages: Sequence[dict[str, str]], *, top_logprobs: int = 10) -> float:
        body = {"messages": list(messages), **_yes_no_body(top_logprobs)}
        return yes_probability_of(self._post_with_retries(body), self.name)

    def _post_with_retries(self, body: dict[str, Any]) -> Any:
        body = {"model": self.model, **body, "stream": False}
        for attempt in range(self._max_retries + 1):
            try:
                return self._post(body)
            except LLMError as exc:
                if not exc.retryable or attempt == self._max_retries:
                    raise
                time.sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, body: dict) -> Any:
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
        return payload


XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"


class LlamaCppLLM:
    """A local GGUF model through xllamacpp's in-process llama.cpp server, imported only when used.

    xllamacpp is a prebuilt wheel (seconds to install) where llama-cpp-python compiled for
    minutes. Its server speaks the OpenAI chat format, token log-probabilities included, so
    this client reads replies as the HTTP clients do. The model loads on first use, not in
    the constructor, so building the client is cheap; the constructor still checks that the
    package and the file exist so that misconfiguration fails at start-up with a readable
    message.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        # The LLM presets send up to 60 context sentences (answer.llm_max_context_sentences): a long
        # World Factbook entry made a 4,201-token prompt, past the 4,096 this once was. The bundled
        # Qwen2.5 model reads 32k; 8,192 tokens of KV cache cost ~0.25 GB for its 1.5B size.
        n_ctx: int = 8192,
        n_threads: int | None = None,
        seed: int = 0,
        verbose: bool = False,
    ) -> None:
        try:
            import xllamacpp
        except ImportError as exc:
            raise LLMError(
                "the local GGUF provider needs xllamacpp, which is not installed: "
                f"pip install {XLLAMACPP_REQUIREMENT} (a prebuilt wheel; `make local-llm` installs it)"
            ) from exc
        self.model_path = Path(model_path)
        if not self.model_path.is_file():
            raise LLMError(f"GGUF model file not found: {self.model_path}")
        self.name = f"llama-cpp:{self.model_path.name}"
        self._xllamacpp = xllamacpp
        self._options = {"n_ctx": n_ctx, "n_threads": n_threads, "seed": seed, "verbose": verbose}
        self._server: Any = None
        self._lock = threading.Lock()

    def _params(self) -> Any:
        params = self._xllamacpp.CommonParams()
        params.model.path = str(self.model_path)
        params.n_ctx = self._options["n_ctx"]
        # One slot: a worker process answers one question at a time, and each extra slot
        # reserves another n_ctx of KV cache.
        params.n_parallel = 1
        params.sampling.seed = self._options["seed"]
        if self._options["n_threads"]:
            params.cpuparams.n_threads = self._options["n_threads"]
            params.cpuparams_batch.n_threads = self._options["n_threads"]
        if not self._options["verbose"]:
            params.verbosity = 0  # errors and warnings only: the server logs every request otherwise
        return params

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        # The server queues requests itself; the lock only keeps two threads from loading twice.
        with self._lock:
            if self._server is None:
                try:
                    self._server = self._xllamacpp.Server(self._params())
                except (ValueError, RuntimeError, OSError) as exc:
                    message = f"llama.cpp could not load {self.model_path}: {_clean(exc, None)}"
                    raise LLMError(message) from None
            server = self._server
        try:
            result = server.handle_chat_completions(body)
        except (ValueError, RuntimeError) as exc:
            raise LLMError(f"llama.cpp failed: {_clean(exc, None)}") from None
        if isinstance(result, dict) and "error" in result:
            # e.g. a prompt longer than n_ctx: the server answers with an OpenAI-style error
            error = result["error"]
            detail = error.get("message", error) if isinstance(error, dict) else error
            raise LLMError(f"llama.cpp refused the request: {_clean(detail, None)}")
        return result

    def complete(
        self, messages: Sequence[dict[str, str]], *, temperature: float = 0.0, max_tokens: int = 512
    ) -> str:
        body = {"messages": list(messages), "temperature": temperature, "max_tokens": max_tokens}
        return _content_of(self._chat(body), self.name)

    def yes_probability(self, messages: Sequence[dict[str, str]], *, top_logprobs: int = 10) -> float:
        body = {"messages": list(messages), "temperature": 0.0, "max_tokens": 1}
        body.update(logprobs=True, top_logprobs=top_logprobs)
        return yes_probability_of(self._chat(body), self.name)


def build_llm(provider: str, **options: Any):
    """Construct a client by provider name: "groq", "openai" (compatible) or "llama_cpp"."""
    factories = {"groq": GroqLLM, "openai": OpenAICompatibleLLM, "llama_cpp": LlamaCppLLM}
    try:
        factory = factories[provider]
    except KeyError:
        raise LLMError(f"unknown LLM provider {provider!r}; expected one of {sorted(factories)}") from None
    return factory(**options)
