"""A bench-only OpenAI-compatible LLM answering BOTH mnemo's and mem0's prompts after a delay.

- mnemo's structured prompts (json_schema name or forced tool: extract, transform,
  transform_with_context) get the echo answers of tests/support/scripted_llm.py;
- mem0's additive extraction (`response_format: json_object`, the "## New Messages" section)
  gets {"memory": [{"text": "User said: <line>"}]}, one memory per user line, the same shape
  of answer the echo extractor gives mnemo.

Every call sleeps `--delay` seconds first, so both systems wait on the same 200 ms "model".
GET /stats returns, per prompt, the calls and the prompt and completion tokens, counted for
both systems with ONE tokenizer: bge-small-en-v1.5's WordPiece (the `tokenizer.json` mnemo's
bundled embedding model ships; no OpenAI encoding loads offline). Prompt tokens are the
messages' contents plus the structured-output schema or tool definition the request sends
(a hosted model bills those too); completion tokens are the answer's JSON.
Run: python -m bench.fake_llm --port P.
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


def tokenizer() -> Any:
    from tokenizers import Tokenizer

    from mnemo.embeddings.local import TOKENIZER_FILE, model_dir

    tok = Tokenizer.from_file(str(model_dir() / TOKENIZER_FILE))
    tok.no_truncation()
    tok.no_padding()
    return tok


def prompt_text(body: dict[str, Any]) -> str:
    """What the model reads: every message's content, then the schema or tools it must use."""
    parts = [str(m.get("content") or "") for m in body.get("messages", [])]
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        parts.append(json.dumps(fmt.get("json_schema")))
    if body.get("tools"):
        parts.append(json.dumps(body["tools"]))
    return "\n".join(parts)


class FakeLLM:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self.prompt_tokens: Counter[str] = Counter()
        self.completion_tokens: Counter[str] = Counter()
        self.tokenizer = tokenizer()
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/stats", self.stats, methods=["GET"]),
                Route("/v1/models", self.stats, methods=["GET"]),
            ]
        )

    async def stats(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "calls": dict(self.calls),
                "prompt_tokens": dict(self.prompt_tokens),
                "completion_tokens": dict(self.completion_tokens),
                "delay": self.delay,
            }
        )

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

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
        content = json.dumps(answer)
        prompt, done = self.count(prompt_text(body)), self.count(content)
        self.prompt_tokens[name] += prompt
        self.completion_tokens[name] += done
        return JSONResponse(completion(body, name, content, prompt, done))


def completion(
    body: dict[str, Any], name: str, content: str, prompt: int = 1, done: int = 1
) -> dict[str, Any]:
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
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": done,
            "total_tokens": prompt + done,
        },
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
