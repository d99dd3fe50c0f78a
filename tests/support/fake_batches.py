"""A fake batch provider for tests: the documented endpoints of OpenAI's Batch API and Anthropic's
Message Batches, on 127.0.0.1, in a thread of the test process (stdlib ``http.server``).

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``POST /v1/batches``, ``GET /v1/batches/{id}``,
``GET /v1/files/{id}/content``. Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
``GET /v1/messages/batches/{id}/results``. A batch ends after ``polls`` looks at it, unless the server
is told to ``hold`` (a batch that never ends while a test kills its poller). Each line answers
``echo: <last user text>``; a marker in that text scripts the line:

    [[batch error]]     the line errors (OpenAI: in the error file, HTTP 500; Anthropic: ``errored``)
    [[batch expire]]    the line expires (OpenAI: ``batch_expired`` in the error file; Anthropic: ``expired``)
    [[batch reject]]    OpenAI: the whole batch fails validation, naming this line; Anthropic: HTTP 400

``fail_looks`` answers that many looks at a batch with HTTP 503. ``counts`` says how many files,
batches and lines were submitted, so a test can prove that nothing was paid twice.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _last_user(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m.get("role") == "user"] or messages
    return str(users[-1].get("content", "")) if users else ""


class FakeBatches:
    """The server and its state; ``base_url`` ends in ``/v1``."""

    def __init__(self, polls: int = 2) -> None:
        self.polls = polls
        self.hold = False
        self.fail_looks = 0
        """Answer this many of the next looks at a batch with HTTP 503."""
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.counts: Counter[str] = Counter()
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    # --- the batches' contents ---------------------------------------------------------------

    def _openai_results(self, batch: dict[str, Any]) -> None:
        out, errors = [], []
        for line in batch["lines"]:
            body = line["body"]
            text = _last_user(body["messages"])
            if "[[batch expire]]" in text:
                errors.append(
                    {
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {
                            "code": "batch_expired",
                            "message": "This request could not be executed before the completion window expired.",
                        },
                    }
                )
            elif "[[batch error]]" in text:
                err = {"error": {"message": "fake server error", "type": "server_error"}}
                errors.append(
                    {"custom_id": line["custom_id"], "response": {"status_code": 500, "body": err}, "error": None}
                )
            else:
                reply = f"echo: {text}"
                completion = {
                    "object": "chat.completion",
                    "model": body["model"],
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                    ],
                    "usage": {"prompt_tokens": len(text) // 4 + 1, "completion_tokens": len(reply) // 4 + 1},
                }
                out.append(
                    {
                        "custom_id": line["custom_id"],
                        "response": {"status_code": 200, "body": completion},
                        "error": None,
                    }
                )
        for name, lines in (("output_file_id", out), ("error_file_id", errors)):
            if lines:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                batch[name] = file_id
        batch["status"] = "expired" if errors and any("expire" in json.dumps(e) for e in errors) else "completed"

    def _anthropic_results(self, batch: dict[str, Any]) -> bytes:
        lines = []
        for request in batch["requests"]:
            params = request["params"]
            text = _last_user(params["messages"])
            if "[[batch expire]]" in text:
                result: dict[str, Any] = {"type": "expired"}
            elif "[[batch error]]" in text:
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "api_error", "message": "fake error"}},
                }
            else:
                reply = f"echo: {text}"
                result = {
                    "type": "succeeded",
                    "message": {
                        "type": "message",
                        "role": "assistant",
                        "model": params["model"],
                        "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": reply}],
                        "stop_reason": "end_turn",
                        "usage": {"input_tokens": len(text) // 4 + 1, "output_tokens": len(reply) // 4 + 1},
                    },
                }
            lines.append({"custom_id": request["custom_id"], "result": result})
        return "".join(json.dumps(x) + "\n" for x in lines).encode()

    # --- HTTP --------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: Any, raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                data = self._body()
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    if self.path == "/v1/files":
                        parser = email.parser.BytesParser(policy=email.policy.HTTP)
                        form = parser.parsebytes(
                            b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + data
                        )
                        parts = {p.get_param("name", header="content-disposition"): p for p in form.iter_parts()}
                        if parts["purpose"].get_content().strip() != "batch":
                            return self._send(400, {"error": {"message": "purpose must be batch"}})
                        file_id = f"file-{len(fake.files) + 1}"
                        fake.files[file_id] = parts["file"].get_payload(decode=True)
                        fake.counts["files"] += 1
                        return self._send(200, {"id": file_id, "object": "file", "purpose": "batch"})
                    if self.path == "/v1/batches":
                        request = json.loads(data)
                        lines = [json.loads(x) for x in fake.files[request["input_file_id"]].decode().splitlines() if x]
                        batch_id = f"batch_{len(fake.batches) + 1}"
                        batch = {"id": batch_id, "object": "batch", "status": "validating", "lines": lines, "looks": 0}
                        rejected = [i for i, x in enumerate(lines, 1) if "[[batch reject]]" in json.dumps(x)]
                        if rejected:
                            batch["status"] = "failed"
                            batch["errors"] = {
                                "data": [
                                    {"code": "invalid_request", "line": i, "message": "fake rejection"}
                                    for i in rejected
                                ]
                            }
                        fake.batches[batch_id] = batch
                        fake.counts["batches"] += 1
                        fake.counts["lines"] += len(lines)
                        return self._send(200, {k: v for k, v in batch.items() if k not in ("lines", "looks")})
                    if self.path == "/v1/messages/batches":
                        requests = json.loads(data)["requests"]
                        for i, request in enumerate(requests):
                            if "[[batch reject]]" in json.dumps(request):
                                error = {"type": "invalid_request_error", "message": f"requests.{i}: fake rejection"}
                                return self._send(400, {"type": "error", "error": error})
                        batch_id = f"msgbatch_{len(fake.batches) + 1}"
                        batch = {
                            "id": batch_id,
                            "type": "message_batch",
                            "processing_status": "in_progress",
                            "requests": requests,
                            "looks": 0,
                        }
                        fake.batches[batch_id] = batch
                        fake.counts["batches"] += 1
                        fake.counts["lines"] += len(requests)
                        return self._send(200, {k: v for k, v in batch.items() if k not in ("requests", "looks")})
                self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_GET(self) -> None:  # noqa: N802
                with fake._lock:
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    parts = self.path.strip("/").split("/")
                    if fake.fail_looks and "results" not in parts and "content" not in parts:
                        fake.fail_looks -= 1
                        return self._send(503, {"error": {"message": "fake overload"}})
                    if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                        return self._send(200, None, raw=fake.files[parts[2]])
                    if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                        batch = fake.batches[parts[2]]
                        if batch["status"] not in ("failed", "completed", "expired"):
                            batch["looks"] += 1
                            batch["status"] = "in_progress"
                            if batch["looks"] >= fake.polls and not fake.hold:
                                fake._openai_results(batch)
                        return self._send(200, {k: v for k, v in batch.items() if k not in ("lines", "looks")})
                    if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                        batch = fake.batches[parts[3]]
                        if batch["processing_status"] != "ended":
                            batch["looks"] += 1
                            if batch["looks"] >= fake.polls and not fake.hold:
                                batch["processing_status"] = "ended"
                                batch["results_url"] = f"{fake.base_url}/messages/batches/{parts[3]}/results"
                        return self._send(200, {k: v for k, v in batch.items() if k not in ("requests", "looks")})
                    if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 5 and parts[4] == "results":
                        return self._send(200, None, raw=fake._anthropic_results(fake.batches[parts[3]]))
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        return Handler
