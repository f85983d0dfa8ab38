"""A job running in the background: an INSERT started with ``Session.start`` (as Flink's
client submits one and returns), with ``wait()``, ``cancel()`` and ``stop(savepoint=DIR)``."""

from __future__ import annotations

import threading
import uuid
from typing import TYPE_CHECKING

from sqlengine.errors import ExecutionError, SqlEngineError, unexpected

if TYPE_CHECKING:
    from sqlengine import runtime


class Job:
    def __init__(self, execution: runtime.JobExecution, name: str) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.name = name
        self.execution = execution
        self.status = "RUNNING"  # RUNNING, FINISHED, FAILED, CANCELED, STOPPED
        self.error: SqlEngineError | None = None
        self.savepoint: str | None = None
        self._thread = threading.Thread(target=self._run, name=f"sqlengine job {self.id}",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for _ in self.execution.run():
                pass
            if self.status == "RUNNING":
                self.status = "CANCELED" if self.execution.cancelled else "FINISHED"
        except SqlEngineError as e:
            self.error, self.status = e, "FAILED"
        except Exception as e:  # no raw exception reaches a user
            self.error, self.status = unexpected(e), "FAILED"

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> None:
        """Until the job ends (raises its error if it failed); TimeoutError past ``timeout``
        seconds."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"job {self.id} is still running")
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        """Stop without a savepoint (what it committed stays; the rest is not written)."""
        self.status = "CANCELED"
        self.execution.cancel()
        self._thread.join()

    def stop(self, savepoint: str | None = None) -> str | None:
        """Stop the job; with ``savepoint`` (a directory), after taking a savepoint there
        that a later run restores from ('execution.state-recovery.path'). Returns the
        savepoint's path."""
        if savepoint is None:
            self.cancel()
            return None
        if self.done:
            raise ExecutionError(f"job {self.id} is {self.status}: there is nothing to stop")
        self.savepoint = self.execution.stop_with_savepoint(savepoint)
        self.status = "STOPPED"
        self._thread.join()
        return self.savepoint

    @property
    def rows(self) -> dict[str, int]:
        """Rows written per sink table so far (once the job ended: all)."""
        result = self.execution.result
        return dict(result.sink_rows) if result is not None else {}
