"""JSON-RPC messages the MCP SDK cannot read, answered as JSON-RPC says (issue 37 item 11).

A request whose ``params`` is not an object (``"params": "x"``) fails the SDK's message
validation before it has an id it can answer: over stdio the SDK logged it at debug
level and answered nothing, so a client waited for ever; over HTTP it answered with
``"id": null`` and pydantic's multi-line dump. A request that has an id is owed an
error carrying that id: here it is made from the raw message, for both transports.
A notification (no id) is owed nothing, as JSON-RPC says.
"""

from __future__ import annotations

from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, ErrorData, JSONRPCError
from pydantic import ValidationError

_KINDS = {str: "a string", int: "a number", float: "a number", bool: "true or false", list: "an array"}


def _request_id(raw: Any) -> int | str | None:
    """The id of a request (an object with a method and a usable id), else None."""
    if not isinstance(raw, dict) or "method" not in raw:
        return None
    rid = raw.get("id")
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        return None  # (a notification, or an id nothing could answer to)
    return rid


def bad_params(raw: Any) -> dict[str, Any] | None:
    """The JSON-RPC error owed to a request whose ``params`` is not an object, else None."""
    rid = _request_id(raw)
    if rid is None or "params" not in raw or raw["params"] is None or isinstance(raw["params"], dict):
        return None
    kind = _KINDS.get(type(raw["params"]), type(raw["params"]).__name__)
    message = f"Invalid params: params must be an object, not {kind}"
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": INVALID_PARAMS, "message": message}}


def unreadable_request(item: SessionMessage | Exception) -> SessionMessage | None:
    """For what the SDK's stdio reader passes on instead of a message (its validation
    error): the error response owed to the request it was, or None."""
    if not isinstance(item, ValidationError):
        return None
    raw = next((e["input"] for e in item.errors() if _request_id(e.get("input")) is not None), None)
    if raw is None:
        return None
    error = bad_params(raw) or {"id": raw["id"], "error": {"code": INVALID_REQUEST, "message": "Invalid request"}}
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=error["id"], error=ErrorData(**error["error"])))
