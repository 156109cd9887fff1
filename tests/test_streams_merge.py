"""Messages of several files merge in time order whatever their times (core/query/streams.py).

Found over the real transcripts: ``get_message_context`` on a session whose files had
messages of equal time at the same position raised a TypeError (the merge's file index
was read late, so ties fell through to comparing the messages themselves).
"""

from __future__ import annotations

from core.model import Message
from core.query.streams import chronological, merge_by_time

AT = "2025-07-01T09:00:00Z"


def _message(file_index: int, text: str, timestamp: str | None = AT) -> Message:
    return Message(session_id="s", agent="claude", sequence=0, role="user", type="text", text=text, timestamp=timestamp,
                   uuid=None, parent_uuid=None, is_sidechain=False, file_index=file_index, entry_index=0, turn=0)


def test_files_with_messages_of_equal_time_and_place_merge_in_file_order() -> None:
    files = [[_message(0, "a")], [_message(1, "b")], [_message(2, "c")]]
    assert [m.text for _, m in merge_by_time(files)] == ["a", "b", "c"]


def test_untimed_first_messages_of_a_stitched_session_merge() -> None:
    stitched = [_message(0, "a", None), _message(1, "b", None), _message(0, "c", None), _message(1, "d")]
    assert sorted(m.text for m in chronological(stitched)) == ["a", "b", "c", "d"]
