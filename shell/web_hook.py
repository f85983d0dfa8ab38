"""Where the command line and the shell meet the live web view: a few calls around each
statement, which import the web view (shell/web.py) only once a port is asked for
(``run --web``, ``SET 'rest.port'``), so a plain ``sqlengine run`` never loads it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlengine

if TYPE_CHECKING:
    from sqlengine.shell.web import OptionFollower

REST_PORT = "rest.port"


def _asks(session: sqlengine.Session) -> bool:
    return session.options.get(REST_PORT, "0").strip() not in ("", "0")


class WebHook:
    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.follower: OptionFollower | None = None

    def _make(self) -> OptionFollower:
        if self.follower is None:
            from sqlengine.shell.web import OptionFollower

            self.follower = OptionFollower(self.say)
        return self.follower

    def serve(self, port: int) -> None:
        """Serve now, on ``port`` (0: a free one), whatever 'rest.port' says (--web-port).

        Raises:
            PlanError: the port cannot be had.
        """
        self._make().serve(port, "")

    def watch(self, session: sqlengine.Session) -> None:
        """Show the jobs ``session`` runs from now on (if a web view is, or is asked for)."""
        if self.follower is not None:
            self.follower.monitor.watch(session)
        self.follow(session)

    def follow(self, session: sqlengine.Session) -> None:
        """After a statement: start, move or stop the web view as 'rest.port' now says.

        Raises:
            PlanError: the port the option names cannot be had.
        """
        if self.follower is not None or _asks(session):
            self._make().follow(session)

    def begin(self, statement: str) -> None:
        if self.follower is not None:
            self.follower.monitor.statement = statement

    def end(self, error: str | None = None) -> None:
        if self.follower is not None:
            self.follower.monitor.statement_done(error)

    def stop(self) -> None:
        if self.follower is not None:
            self.follower.stop()
