"""A real OpenAI-compatible HTTP server whose answers tests script per prompt name.

    with ScriptedLLMServer() as server:
        server.script("extract", {"memories": [{"topic": "work", "content": "User codes."}]})
        server.fail("extract", status=503, times=2)  # the first two calls fail
        llm = OpenAICompatibleLLM(base_url=server.base_url, api_key=None, model="m")

The prompt name comes from `response_format.json_schema.name` or the forced tool's name, and
the answer uses the same structured mode as the request. A prompt without a script gets an
HTTP 500 naming it, so a test fails loudly. `/v1/embeddings` answers deterministic hash vectors.

Agent loops (a framework choosing among several tools) name no prompt: `server.agent_turns(...)`
queues the assistant's turns for them, each a tool call or a final text:

    server.agent_turns([tool_call("remember", fact="..."), tool_call("recall", query="..."),
                        lambda request: text_turn(f"I recall: {last_tool_output(request)}")])

Standalone, for benchmarks: `python -m tests.support.scripted_llm --port 8199 --delay 0.2 --echo`.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import itertools
import json
import re
import socket
import struct
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mnemo.embeddings.hashing import hash_embedding

# Fault injection key for /v1/embeddings: server.fail(EMBEDDINGS, status=503).
EMBEDDINGS = "embeddings"
DEFAULT_EMBEDDING_DIM = 384

Answer = dict[str, Any]
Responder = Callable[[dict[str, Any]], Any]

_INVALID_JSON = '{"memories": [{"topic": "broken", "content": '


def tool_call(name: str, **arguments: Any) -> Answer:
    """An agent turn that calls tool `name` with `arguments`."""
    return {"tool_call": {"name": name, "arguments": arguments}}


def text_turn(text: str) -> Answer:
    """An agent turn that answers with plain text (the end of the loop)."""
    return {"text": text}


def last_tool_output(request_json: dict[str, Any]) -> str:
    """The content of the last tool result the agent framework sent back."""
    results = [m for m in request_json.get("messages", []) if m.get("role") == "tool"]
    if not results:
        raise AssertionError("the request carries no tool result")
    content = results[-1].get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)


class _Exhausted:
    """Marker for a list script whose answers are all used up."""


def _as_json(answer: Any) -> Answer:
    if hasattr(answer, "model_dump"):
        return answer.model_dump(mode="json")
    if isinstance(answer, dict):
        return answer
    raise TypeError(f"a scripted answer must be a dict or a pydantic model, got {type(answer)!r}")


def prompt_name_of(request_json: dict[str, Any]) -> str | None:
    """The prompt name from the structured-output request, or None for a free-form chat."""
    response_format = request_json.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        name = (response_format.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    tool_choice = request_json.get("tool_choice")
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name")
        if name:
            return str(name)
    tools = request_json.get("tools") or []
    if len(tools) == 1:
        name = (tools[0].get("function") or {}).get("name")
        if name:
            return str(name)
    return None


def _is_agent_loop(request_json: dict[str, Any]) -> bool:
    """Tools offered, none forced, no structured output: an agent framework's turn."""
    if not request_json.get("tools") or request_json.get("response_format"):
        return False
    return not isinstance(request_json.get("tool_choice"), dict)


def _uses_tools(request_json: dict[str, Any]) -> bool:
    return bool(request_json.get("tools")) and not request_json.get("response_format")


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _error(status: int, message: str) -> JSONResponse:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return JSONResponse(body, status_code=status)


# --- Echo answers (for benchmarks): deterministic, instant, and plausible. -------------------

_TOPIC_LINE = re.compile(r"^- (.+?)(?: \(bounded[^)]*\))?: ")


def _first_topic(system_prompt: str) -> str:
    _, _, after = system_prompt.partition("Topics:\n")
    for line in after.splitlines():
        match = _TOPIC_LINE.match(line)
        if match:
            return match.group(1)
    return "general"


def _messages_by_role(request_json: dict[str, Any], role: str) -> list[str]:
    return [
        str(m.get("content") or "")
        for m in request_json.get("messages", [])
        if m.get("role") == role
    ]


def _user_body(request_json: dict[str, Any]) -> dict[str, Any]:
    users = _messages_by_role(request_json, "user")
    try:
        body = json.loads(users[-1]) if users else {}
    except json.JSONDecodeError:
        return {}
    return body if isinstance(body, dict) else {}


def echo_extract(request_json: dict[str, Any]) -> Answer:
    """One memory per user line, under the first listed topic: 'User said: <line>'."""
    systems = _messages_by_role(request_json, "system")
    topic = _first_topic(systems[0] if systems else "")
    units = [str(u) for u in _user_body(request_json).get("input", [])]
    has_roles = any(re.match(r"^\w+: ", u) for u in units)
    lines = []
    for unit in units:
        role, sep, text = unit.partition(": ")
        if not has_roles:
            lines.append(unit)
        elif sep and role.lower() == "user":
            lines.append(text)
    return {"memories": [{"topic": topic, "content": f"User said: {line}"} for line in lines]}


def echo_transform(request_json: dict[str, Any]) -> Answer:
    """The items, unchanged."""
    return {"memories": _user_body(request_json).get("memories", [])}


def echo_transform_with_context(request_json: dict[str, Any]) -> Answer:
    """Everything kept."""
    body = _user_body(request_json)
    return {
        "existing": [{"id": m["id"], "action": "keep"} for m in body.get("existing", [])],
        "new": [{"index": m["index"], "action": "keep"} for m in body.get("new", [])],
    }


def echo_extract_reconcile(request_json: dict[str, Any]) -> Answer:
    """The echo extract's memories, every existing memory kept; a memory that restates an
    existing one word for word is left out (as the echo transform_with_context's keep
    writes nothing for it)."""
    said = {m.get("content") for m in _user_body(request_json).get("existing", [])}
    memories = [m for m in echo_extract(request_json)["memories"] if m["content"] not in said]
    return {"memories": memories, "existing": []}


def echo_probe(request_json: dict[str, Any]) -> Answer:
    """`mnemo serve`'s start-up probe (mnemo.prompts.probe): the word it asks for."""
    asked = re.search(
        r"Return the word '([^']*)'", " ".join(_messages_by_role(request_json, "user"))
    )
    return {"word": asked.group(1) if asked else ""}


ECHO_RESPONDERS: dict[str, Responder] = {
    "probe": echo_probe,
    "extract": echo_extract,
    "transform": echo_transform,
    "transform_with_context": echo_transform_with_context,
    "extract_reconcile": echo_extract_reconcile,
}


class ScriptedLLMServer:
    """An OpenAI-compatible server on 127.0.0.1 in a background thread. Thread-safe."""

    def __init__(
        self,
        *,
        port: int = 0,
        echo: bool = False,
        delay_seconds: float = 0.0,
        embedding_dim: int = DEFAULT_EMBEDDING_DIM,
    ) -> None:
        """`port=0` picks a free port. `echo=True` answers unscripted prompts with echo_*."""
        self.delay_seconds = delay_seconds
        self.embedding_dim = embedding_dim
        self.echo = echo
        self._requested_port = port
        self._lock = threading.Lock()
        self._responders: dict[str, Responder | deque[Any]] = {}
        self._faults: dict[str, deque[int | None]] = defaultdict(deque)  # status, None=bad JSON
        self._calls: list[tuple[str, dict[str, Any]]] = []
        self._authorizations: list[str | None] = []  # each chat call's Authorization header
        self._embedding_calls: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._agent_turns: deque[Answer | Responder] = deque()
        self._holds: dict[str, threading.Event] = {}
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    # --- scripting -------------------------------------------------------------------------

    def script(self, prompt_name: str, responder: Any) -> None:
        """Answer `prompt_name` with a dict/pydantic answer, a list of them (used in order,
        then HTTP 500), or a callable `(request_json) -> answer`. Replaces any earlier script."""
        with self._lock:
            if callable(responder) and not hasattr(responder, "model_dump"):
                self._responders[prompt_name] = responder
            elif isinstance(responder, list):
                self._responders[prompt_name] = deque(_as_json(a) for a in responder)
            else:
                answer = _as_json(responder)
                self._responders[prompt_name] = lambda _request: answer

    def agent_turns(self, turns: list[Answer | Responder]) -> None:
        """Queue the answers to agent-loop requests (tools offered, none forced, no
        response_format): `tool_call(...)`, `text_turn(...)`, or a callable of the request
        returning one. Used in order; past the last, requests are answered as before."""
        with self._lock:
            self._agent_turns.extend(turns)

    @property
    def agent_turns_left(self) -> int:
        with self._lock:
            return len(self._agent_turns)

    def clear_agent_turns(self) -> None:
        with self._lock:
            self._agent_turns.clear()

    def hold(self, prompt_name: str) -> threading.Event:
        """Calls of `prompt_name` wait, unanswered, until the returned event is set (a
        run held in flight at that step). `calls_for` shows them as they arrive."""
        gate = threading.Event()
        with self._lock:
            self._holds[prompt_name] = gate
        return gate

    def fail(self, prompt_name: str, status: int = 503, times: int = 2) -> None:
        """The next `times` calls of `prompt_name` get HTTP `status` (before any answer)."""
        with self._lock:
            self._faults[prompt_name].extend([status] * times)

    def invalid_json(self, prompt_name: str, times: int = 1) -> None:
        """The next `times` calls of `prompt_name` get truncated, unparsable JSON."""
        with self._lock:
            self._faults[prompt_name].extend([None] * times)

    def reset(self) -> None:
        """Forget scripts, faults, recorded calls and the delay."""
        with self._lock:
            self._responders.clear()
            self._faults.clear()
            self._calls.clear()
            self._authorizations.clear()
            self._embedding_calls.clear()
            self._agent_turns.clear()
            for gate in self._holds.values():
                gate.set()  # nothing stays held past its test
            self._holds.clear()
            self.delay_seconds = 0.0

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        """A snapshot of the chat calls received: (prompt_name, request_json), oldest first."""
        with self._lock:
            return list(self._calls)

    @property
    def authorizations(self) -> list[str | None]:
        """The Authorization header of each scripted chat call, oldest first."""
        with self._lock:
            return list(self._authorizations)

    def calls_for(self, prompt_name: str) -> list[dict[str, Any]]:
        return [request for name, request in self.calls if name == prompt_name]

    @property
    def embedding_calls(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._embedding_calls)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the scripted LLM server is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        if self._thread is not None:
            return self
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self._requested_port))
        self._socket = sock
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
            backlog=4096,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the scripted LLM server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def serve_forever(self) -> None:
        """Run in the calling thread until interrupted (the standalone mode)."""
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=self._requested_port,
            log_level="info",
            access_log=False,
            lifespan="off",
            backlog=4096,
        )
        uvicorn.Server(config).run()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- endpoints -------------------------------------------------------------------------

    async def _chat(self, request: Request) -> JSONResponse:
        request_json = await request.json()
        with self._lock:  # only while turns are queued: other tests name one tool, unforced
            turn = (
                self._agent_turns.popleft()
                if self._agent_turns and _is_agent_loop(request_json)
                else None
            )
            if turn is not None:
                self._calls.append(("", request_json))
        if turn is not None:
            return self._agent_completion(
                request_json, turn(request_json) if callable(turn) else turn
            )
        name = prompt_name_of(request_json)
        with self._lock:
            self._calls.append((name or "", request_json))
            self._authorizations.append(request.headers.get("authorization"))
            fault = self._faults[name].popleft() if name and self._faults.get(name) else 0
            responder = self._responders.get(name) if name else None
            gate = self._holds.get(name) if name else None
            answer: Any = None
            if fault == 0 and isinstance(responder, deque):
                answer = responder.popleft() if responder else _Exhausted()
        if self.delay_seconds > 0:
            await asyncio.sleep(self.delay_seconds)
        if gate is not None:  # bounded, so a test that forgets to release still ends
            await asyncio.to_thread(gate.wait, 300)
        if name is None:
            return _error(
                400,
                "scripted LLM: the request names no prompt (no json_schema "
                "response_format and no forced tool call)",
            )
        if fault:
            return _error(fault, f"scripted LLM: injected HTTP {fault} for prompt '{name}'")
        if fault is None:
            return self._completion(request_json, name, _INVALID_JSON)
        if isinstance(answer, _Exhausted):
            return _error(
                500, f"scripted LLM: the answers scripted for prompt '{name}' are all used up"
            )
        if answer is None:
            if callable(responder):
                answer_for: Responder = responder
            elif self.echo and name == "extract_reconcile" and callable(self._extract_script()):
                answer_for = self._composed_extract
            elif self.echo and name in ECHO_RESPONDERS:
                answer_for = ECHO_RESPONDERS[name]
            else:
                return _error(500, f"scripted LLM: no script for prompt '{name}'")
            try:
                answer = answer_for(request_json)
            except Exception as exc:
                return _error(
                    500,
                    f"scripted LLM: the responder for prompt '{name}' raised "
                    f"{type(exc).__name__}: {exc}",
                )
        return self._completion(request_json, name, json.dumps(_as_json(answer)))

    def _extract_script(self) -> Responder | deque[Any] | None:
        with self._lock:
            return self._responders.get("extract")

    def _composed_extract(self, request_json: dict[str, Any]) -> Answer:
        """An echo server's extract_reconcile when a test scripted extract with a callable:
        that extract's memories, every existing memory kept."""
        extract = self._extract_script()
        assert callable(extract)
        return {"memories": _as_json(extract(request_json))["memories"], "existing": []}

    def _completion(self, request_json: dict[str, Any], name: str, content: str) -> JSONResponse:
        number = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish_reason = "stop"
        if _uses_tools(request_json):
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {"name": name, "arguments": content},
                    }
                ],
            }
            finish_reason = "tool_calls"
        prompt_tokens = _rough_tokens(json.dumps(request_json.get("messages", [])))
        completion_tokens = _rough_tokens(content)
        body = {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request_json.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return JSONResponse(body)

    def _agent_completion(self, request_json: dict[str, Any], turn: Answer) -> JSONResponse:
        number = next(self._ids)
        message: dict[str, Any]
        if "tool_call" in turn:
            call = turn["tool_call"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{number}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": json.dumps(call["arguments"]),
                        },
                    }
                ],
            }
            finish_reason = "tool_calls"
        else:
            message = {"role": "assistant", "content": turn["text"]}
            finish_reason = "stop"
        tokens = _rough_tokens(json.dumps(request_json.get("messages", [])))
        body = {
            "id": f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request_json.get("model", "scripted"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": {"prompt_tokens": tokens, "completion_tokens": 1, "total_tokens": tokens + 1},
        }
        return JSONResponse(body)

    async def _embeddings(self, request: Request) -> JSONResponse:
        request_json = await request.json()
        with self._lock:
            self._embedding_calls.append(request_json)
            queue = self._faults.get(EMBEDDINGS)
            fault = queue.popleft() if queue else 0
        if self.delay_seconds > 0:
            await asyncio.sleep(self.delay_seconds)
        if fault:
            return _error(fault, f"scripted LLM: injected HTTP {fault} for embeddings")
        inputs = request_json.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dim = int(request_json.get("dimensions") or self.embedding_dim)
        as_base64 = request_json.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector = hash_embedding(str(text), dim)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii")
                if as_base64
                else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_rough_tokens(str(t)) for t in inputs)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": request_json.get("model", "scripted"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _models(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "object": "list",
                "data": [
                    {"id": "scripted", "object": "model", "created": 0, "owned_by": "mnemo-tests"}
                ],
            }
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server for tests")
    parser.add_argument("--port", type=int, default=8199)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds of latency per call")
    parser.add_argument(
        "--echo",
        action="store_true",
        help="answer extract/transform/transform_with_context with echo answers",
    )
    parser.add_argument("--embedding-dim", type=int, default=DEFAULT_EMBEDDING_DIM)
    args = parser.parse_args(argv)
    server = ScriptedLLMServer(
        port=args.port, echo=args.echo, delay_seconds=args.delay, embedding_dim=args.embedding_dim
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
