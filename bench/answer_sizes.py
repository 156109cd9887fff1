"""Largest MCP tool result, with default arguments, over a whole archive.

    python -m bench.answer_sizes HOME [--sessions N]

Calls every tool through the MCP SDK's in-memory client on every session of the
archive under ``HOME`` (``get_conversation``, ``get_session_messages``,
``get_session_statistics``, ``read_turn`` on each turn of the first page,
``get_message_context`` at a search hit and at message 0), each chain whole and as a
range (``name#1-2``), plus the listings and the
archive's ``queries.json`` searches, and prints the largest results: characters sent,
text and structured copy together, against ``core.budget.RESULT_BUDGET``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.api import Archive
from core.budget import RESULT_BUDGET
from core.config import Config
from core.front.mcp import build_server


async def measure(home: Path, limit: int | None) -> list[tuple[int, str]]:
    sizes: list[tuple[int, str]] = []
    with Archive.open(Config.from_env({"HOME": str(home)})) as archive:
        sessions = archive.list_sessions(limit=500)
        queries = []
        if (home / "queries.json").exists():
            raw = json.loads((home / "queries.json").read_text())
            queries = [q["query"] if isinstance(q, dict) else str(q) for q in (raw["queries"] if isinstance(raw, dict) else raw)]
        async with Client(build_server(archive), raise_exceptions=True) as c:

            async def call(tool: str, **args: Any) -> dict[str, Any] | None:
                result = await c.call_tool(tool, args)
                if result.is_error:
                    sizes.append((0, f"ERROR {tool}{args}: {result.content[0].text}"))  # type: ignore[union-attr]
                    return None
                text = result.content[0].text  # type: ignore[union-attr]
                sent = len(text) + len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
                sizes.append((sent, f"{tool}{args}"))
                return result.structured_content

            await call("list_sessions")
            await call("list_projects")
            for query in queries[:limit]:
                hits = await call("search_history", query=query)
                for hit in (hits or {}).get("results", [])[:2]:
                    await call("get_message_context", session_id=hit["session_id"], sequence=hit["sequence"])
            for info in sessions[:limit]:
                sid = info.session_id
                conv = await call("get_conversation", session_id_or_slug=sid)
                await call("get_session_messages", session_id=sid)
                await call("get_session_statistics", session_id=sid)
                await call("get_message_context", session_id=sid, sequence=0)
                for turn in (conv or {}).get("turns", []):
                    await call("read_turn", session_id=sid, turn_number=turn["turn_number"])
            chains = sorted({i.chain_name for i in sessions[:limit] if i.chain_name and (i.chain_length or 1) > 1})
            for name in chains:  # a whole chain, and its first two sessions as a range
                whole = name if archive.resolve(f"{name}#1").sessions[0].slug else f"{name}#1-2"
                for ref in (whole, f"{name}#1-2"):
                    await call("get_conversation", session_id_or_slug=ref)
                    await call("get_session_messages", session_id=ref)
                    await call("get_session_statistics", session_id=ref)
    return sorted(sizes, reverse=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--sessions", type=int, default=None, help="only the N most recent sessions (and N queries)")
    args = ap.parse_args(argv)
    started = time.monotonic()
    sizes = anyio.run(measure, args.home, args.sessions)
    errors = [name for size, name in sizes if name.startswith("ERROR")]
    print(f"{len(sizes)} tool results in {time.monotonic() - started:.0f} s; budget {RESULT_BUDGET:,} characters")
    for size, name in sizes[:8]:
        print(f"  {size:>9,}  {name[:150]}")
    for name in errors[:5]:
        print(f"  {name[:200]}")
    over = [s for s, _ in sizes if s > RESULT_BUDGET]
    print(f"over budget: {len(over)}; errors: {len(errors)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
