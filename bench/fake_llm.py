"""A bench-only OpenAI-compatible LLM answering BOTH mnemo's and mem0's prompts after a delay.

- mnemo's structured prompts (json_schema name or forced tool: extract, transform,
  transform_with_context) get the echo answers of tests/support/scripted_llm.py;
- mem0's additive extraction (`response_format: json_object`, the "## New Messages" section)
  gets {"memory": [{"text": "User said: <line>"}]}, one memory per user line, the same shape
  of answer the echo extractor gives mnemo.

Every call sleeps `--delay` seconds first, so both systems wait on the same 200 ms "model".
GET /stats returns the call counts per prompt. Run: python -m bench.fake_llm --port P.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import Counter
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.support.scripted_llm import ECHO_RESPONDERS, prompt_name_of

MEM0 = "mem0_additive_extraction"


def mem0_answer(request_json: dict[str, Any]) -> dict[str, Any]:
    users = [m.get("content") or "" for m in request_json.get("messages", [])]
    prompt = str(users[-1]) if users else ""
    _, _, section = prompt.partition("## New Messages\n")
    section = section.split("\n## ", 1)[0]
    lines = [ln[len("user: ") :].strip() for ln in section.splitlines() if ln.startswith("user: ")]
    return {"memory": [{"text": f"User said: {line}"} for line in lines if line]}


class FakeLLM:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/stats", self.stats, methods=["GET"]),
                Route("/v1/models", self.stats, methods=["GET"]),
            ]
        )

    async def stats(self, request: Request) -> JSONResponse:
        return JSONResponse({"calls": dict(self.calls), "delay": self.delay})

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        name = prompt_name_of(body)
        fmt = (body.get("response_format") or {}).get("type")
        if name is None and fmt == "json_object":
            name = MEM0
        self.calls[name or "unknown"] += 1
        await asyncio.sleep(self.delay)
        if name == MEM0:
            answer = mem0_answer(body)
        elif name in ECHO_RESPONDERS:
            answer = ECHO_RESPONDERS[name](body)
        else:
            message = f"fake LLM: unknown prompt {name!r}"
            return JSONResponse({"error": {"message": message}}, status_code=400)
        return JSONResponse(completion(body, name, json.dumps(answer)))


def completion(body: dict[str, Any], name: str, content: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    finish = "stop"
    if body.get("tools") and not body.get("response_format"):
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": name, "arguments": content},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args(argv)
    server = FakeLLM(args.delay)
    uvicorn.run(
        server.app,
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        backlog=4096,
    )


if __name__ == "__main__":
    main()
