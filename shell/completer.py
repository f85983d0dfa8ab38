"""prompt-toolkit Completer over the pure completion engine and the live catalog."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from sqlengine.shell.completion_engine import catalog_info, suggest

if TYPE_CHECKING:
    import sqlengine


class SqlCompleter(Completer):
    def __init__(self, session: sqlengine.Session) -> None:
        self.session = session

    def get_completions(self, document: Document, complete_event: CompleteEvent
                        ) -> Iterable[Completion]:
        info = catalog_info(self.session)
        for s in suggest(document.text_before_cursor, info, document.text_after_cursor):
            yield Completion(s.text, start_position=s.start, display_meta=s.kind)
