"""An OpenAI-compatible chat-completions server of our own on 127.0.0.1, for Letta's agents.

It answers from a script: each agent step pops the next scripted reply (a tool call or a text, optionally
reporting a context past the window so that Letta compacts), a request without tools (Letta's summariser)
gets a fixed summary, and every request's system message is logged, in
order, so that two servers' conversations can be compared byte for byte.

It also models a provider's prompt cache: each request is read as its tools (by name: Letta loads an agent's
tools with no ORDER BY, so their order is PostgreSQL's, the same noise for every mode), then its messages, in
order (each as JSON), and ``cached`` is the longest prefix it shares with any earlier request of the same agent
(the ``AGENT_ID`` of its system message; the summariser's requests are their own group). ``tools`` is logged as
sent.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional

SUMMARY = "The user and the assistant talked about tea; the assistant noted it in memory."
AGENT_ID = re.compile(r"AGENT_ID: (agent-[0-9a-f-]+)")


class MockLLM:
    def __init__(self) -> None:
        self.script: deque[dict[str, Any]] = deque()
        # {"kind": "step" | "summary", "system": str, "tools": str, "agent": str | None, "chars": int, "cached": int}
        self.log: list[dict[str, Any]] = []
        self._prompts: dict[Optional[str], list[str]] = {}  # agent -> every request read as one string
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "MockLLM":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def say(self, text: str, overflow: bool = False) -> None:
        """A text reply; ``overflow``: report a context past the window, so Letta compacts after the step."""
        self.script.append({"content": text, "overflow": overflow})

    def call(self, name: str, **arguments: Any) -> None:
        self.script.append({"tool": name, "arguments": arguments})

    def systems(self, kind: str = "step") -> list[str]:
        return [entry["system"] for entry in self.log if entry["kind"] == kind]

    def _reply(self, request: dict[str, Any]) -> dict[str, Any]:
        messages = request.get("messages") or []
        system = next((m.get("content") for m in messages if m.get("role") in ("system", "developer")), None)
        if isinstance(system, list):
            system = "".join(part.get("text", "") for part in system)
        kind = "step" if request.get("tools") else "summary"
        agent = AGENT_ID.search(system) if kind == "step" and isinstance(system, str) else None
        tools = json.dumps(request.get("tools") or [])
        by_name = sorted(request.get("tools") or [], key=lambda tool: str(tool.get("function", tool).get("name")))
        prompt = json.dumps(by_name) + "".join(json.dumps(m) for m in messages)
        with self._lock:
            earlier = self._prompts.setdefault(agent[1] if agent else None, [])
            cached = max((common_prefix(prompt, other) for other in earlier), default=0)
            earlier.append(prompt)
            self.log.append(
                dict(kind=kind, system=system, tools=tools, agent=agent and agent[1], chars=len(prompt), cached=cached)
            )
            step: Optional[dict[str, Any]] = self.script.popleft() if kind == "step" and self.script else None
        message: dict[str, Any] = {"role": "assistant", "content": SUMMARY if kind == "summary" else "Noted."}
        finish = "stop"
        if step is not None and "tool" in step:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{len(self.log)}",
                        "type": "function",
                        "function": {"name": step["tool"], "arguments": json.dumps(step["arguments"])},
                    }
                ],
            }
            finish = "tool_calls"
        elif step is not None:
            message["content"] = step["content"]
        tokens = 10**6 if step is not None and step.get("overflow") else 110
        return {
            "id": f"chatcmpl-{len(self.log)}",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "mock"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": tokens - 10, "completion_tokens": 10, "total_tokens": tokens},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(
                    {"object": "list", "data": [{"id": "mock", "object": "model", "created": 0, "owned_by": "mock"}]}
                )

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                reply = mock._reply(request)
                if not request.get("stream"):
                    self._send(reply)
                    return
                # One chunk with the whole reply, then the end: what Letta's stream reader needs.
                choice = reply["choices"][0]
                delta = dict(choice["message"])
                for index, call in enumerate(delta.get("tool_calls") or []):
                    call["index"] = index
                chunk = {
                    **reply,
                    "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}],
                }
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())

        return Handler


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b`` (a binary search of slice comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
