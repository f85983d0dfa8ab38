"""What the options say about checkpoints, restoring and restarting (Flink 2.x's keys).

'execution.checkpointing.interval' turns checkpoints on; 'execution.checkpointing.dir' is
where they go (a directory: each job writes ``<dir>/<job id>/chk-<n>/``). A job restores from
'execution.state-recovery.path' (one checkpoint or savepoint) or, as ``sqlengine run
--restore DIR`` asks, from the newest completed one under a directory ('$restore-latest').
'restart-strategy.type' = 'fixed-delay' restarts a failed job from its last checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlengine.errors import PlanError
from sqlengine.options import parse_duration

INTERVAL = "execution.checkpointing.interval"
DIRECTORY = "execution.checkpointing.dir"
MODE = "execution.checkpointing.mode"
TIMEOUT = "execution.checkpointing.timeout"
RETAINED = "execution.checkpointing.num-retained"
RECOVERY_PATH = "execution.state-recovery.path"
RESTORE_LATEST = "$restore-latest"  # (sqlengine run --restore DIR: the newest under DIR)
RESTART = "restart-strategy.type"
ATTEMPTS = "restart-strategy.fixed-delay.attempts"
DELAY = "restart-strategy.fixed-delay.delay"

MODES = ("EXACTLY_ONCE", "AT_LEAST_ONCE")
RESTART_TYPES = ("none", "disable", "off", "fixed-delay")


@dataclass(frozen=True, slots=True)
class CheckpointConfig:
    interval_ms: int = 0  # 0: no periodic checkpoints
    directory: Path | None = None
    exactly_once: bool = True  # aligned barriers (else barriers overtake nothing, no waiting)
    timeout_ms: int = 600_000
    retained: int = 1
    restore: Path | None = None  # a checkpoint, or a directory to take the newest from
    restore_latest: bool = False  # ``restore`` is a directory: the newest under it
    restart_attempts: int = 0  # fixed-delay restarts (0: a failure fails the job)
    restart_delay_ms: int = 1000

    @property
    def enabled(self) -> bool:
        return self.interval_ms > 0


def wanted(options: dict[str, str]) -> bool:
    """Whether the job checkpoints or restores (else the coordinator is not even loaded)."""
    return bool(options.get(INTERVAL) or options.get(RECOVERY_PATH) or
                options.get(RESTORE_LATEST) or options.get(DIRECTORY))


def checkpoint_config(options: dict[str, str]) -> CheckpointConfig:
    """The checkpoint settings of ``options``.

    Raises:
        PlanError: naming the option that is missing or inconsistent.
    """
    interval = parse_duration(options[INTERVAL], INTERVAL) if options.get(INTERVAL) else 0
    directory = options.get(DIRECTORY) or None
    if interval and directory is None:
        raise PlanError(f"option {INTERVAL!r} needs {DIRECTORY!r}: the directory the "
                        "checkpoints are written to (without one a restart could not find "
                        "them)")
    if directory is not None and not interval:
        raise PlanError(f"option {DIRECTORY!r} is set but {INTERVAL!r} is not: set an "
                        "interval to take checkpoints")
    mode = options.get(MODE, "EXACTLY_ONCE").upper()
    if mode not in MODES:
        raise PlanError(f"option {MODE!r} must be one of {', '.join(MODES)}, got "
                        f"{options.get(MODE)!r}")
    timeout = parse_duration(options.get(TIMEOUT, "10 min"), TIMEOUT)
    retained = int(options.get(RETAINED, "1"))
    restart = options.get(RESTART, "none").lower()
    attempts = 0
    delay = 1000
    if restart == "fixed-delay":
        attempts = int(options.get(ATTEMPTS, "1"))
        delay = parse_duration(options.get(DELAY, "1 s"), DELAY)
    elif options.get(ATTEMPTS) or options.get(DELAY):
        key = ATTEMPTS if options.get(ATTEMPTS) else DELAY
        raise PlanError(f"option {key!r} is set but {RESTART!r} is not 'fixed-delay': it "
                        "would be ignored")
    restore: Path | None = None
    latest = False
    if options.get(RECOVERY_PATH):
        restore = Path(options[RECOVERY_PATH])
    elif options.get(RESTORE_LATEST):
        restore = Path(options[RESTORE_LATEST])
        latest = True
    return CheckpointConfig(interval, Path(directory) if directory else None,
                            mode == "EXACTLY_ONCE", timeout, retained, restore, latest,
                            attempts, delay)
