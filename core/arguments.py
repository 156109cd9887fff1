"""One-line texts for bad arguments, the same from every front end.

HTTP parses query strings itself, the MCP SDK validates with pydantic, and the CLI
with argparse; a model or a person reading the error should see the same line
whichever way it came (``limit must be 1-500, not 0``), never a validation dump.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .config import AGENTS
from .errors import BadInput

# One rule for every front end (CLI exit 1, MCP tool error, HTTP 400): a query with no
# characters but whitespace is a bad argument, never "no matches" nor an empty list.
EMPTY_QUERY = "query must not be empty: give the words to search for"


def search_query(query: Any) -> str:
    """``query`` when it holds something besides whitespace; else :data:`EMPTY_QUERY`."""
    if not isinstance(query, str) or not query.strip():
        raise BadInput(EMPTY_QUERY)
    return query


def agent_filter(agent: Any) -> str | None:
    """An ``agent`` filter: None or one of the agents relay-search reads (any case);
    anything else is a bad argument naming them, never an empty answer."""
    if agent is None or (isinstance(agent, str) and not agent.strip()):
        return None
    name = agent.strip().lower() if isinstance(agent, str) else agent
    if name not in AGENTS:
        raise BadInput(f"agent must be one of {', '.join(AGENTS)}, not {agent!r}")
    return name


def out_of_bounds(name: str, value: Any, lo: int | float | None, hi: int | float | None) -> str:
    if lo is not None and hi is not None:
        bounds = f"{lo}-{hi}"
    elif lo is not None:
        bounds = f">= {lo}"
    else:
        bounds = f"<= {hi}"
    return f"{name} must be {bounds}, not {value}"


def not_integer(name: str, value: Any) -> str:
    return f"{name} must be an integer, not {value!r}"


def not_boolean(name: str, value: Any) -> str:
    return f"{name} must be true or false, not {value!r}"


def validation_line(errors: Sequence[Mapping[str, Any]], schema: dict[str, Any]) -> str:
    """The first of pydantic's ``errors()`` as one line, with bounds from the JSON schema."""
    if not errors:
        return "Invalid arguments"
    error = errors[0]
    loc = [str(part) for part in error.get("loc", ())]
    name = loc[0] if loc else "argument"
    kind = error.get("type", "")
    value = error.get("input")
    prop = _property(schema, name)
    if kind == "missing":
        return f"Missing argument: {name}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return out_of_bounds(name, value, prop.get("minimum"), prop.get("maximum"))
    if kind.startswith("int_"):
        return not_integer(name, value)
    if kind.startswith("bool_"):
        return not_boolean(name, value)
    if kind == "string_too_short":
        return EMPTY_QUERY if name == "query" else f"{name} must not be empty"
    if kind == "literal_error":
        expected = (error.get("ctx") or {}).get("expected", "")
        return f"{name} must be {expected}, not {value!r}"
    if kind == "string_type":
        return f"{name} must be a string, not {value!r}"
    if kind == "list_type":
        return f"{name} must be a list, not {value!r}"
    if kind == "extra_forbidden":
        return f"Unknown argument: {name}"
    return f"{name}: {error.get('msg', 'invalid value')}"


def _property(schema: dict[str, Any], name: str) -> dict[str, Any]:
    """A parameter's schema, looking inside ``anyOf`` (``int | None``)."""
    prop = (schema.get("properties") or {}).get(name) or {}
    merged = dict(prop)
    for option in prop.get("anyOf", ()):
        for key in ("minimum", "maximum"):
            if key in option:
                merged.setdefault(key, option[key])
    return merged
