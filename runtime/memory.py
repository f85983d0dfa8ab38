"""The memory budget: Flink's managed memory, shared by the stateful operators of a process.

'taskmanager.memory.managed.size' sets it for the whole job (split evenly between the task
slots, as Flink splits a TaskManager's managed memory); unset, it is
'taskmanager.memory.managed.fraction' (0.4, Flink's default) of the memory a slot may use:
the machine's (or the cgroup's) memory divided between the slots, and no more than the room
left under the process's address-space limit (``ulimit -v`` / ``prlimit --as``).

Operators report their state (``Operator.state_bytes``) after each batch; when a slot's total
passes its budget, the operator that grew is asked to spill (batch mode: sort, join and
aggregation move their rows to files under 'io.tmp.dirs') or, if it cannot, the job fails
with an error naming the operator, its state and the budget.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlengine.options import parse_size

DEFAULT_FRACTION = 0.4
SIZE_KEY = "taskmanager.memory.managed.size"
FRACTION_KEY = "taskmanager.memory.managed.fraction"


def _physical() -> int:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:  # a container's limit (cgroup v2), when lower
        with open("/sys/fs/cgroup/memory.max") as f:
            text = f.read().strip()
        if text.isdigit():
            total = min(total, int(text))
    except OSError:
        pass
    return total


def _address_room() -> int | None:
    """Bytes left under the address-space limit (None: unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        size = 0
    return max(soft - size, 0)


def budget_bytes(options: Mapping[str, str], slots: int = 1) -> int:
    """A slot's budget in bytes (0: none, with 'taskmanager.memory.managed.size' = -1)."""
    slots = max(slots, 1)
    if options.get(SIZE_KEY):
        total = parse_size(options[SIZE_KEY], SIZE_KEY)
        return 0 if total < 0 else max(total // slots, 1)
    fraction = float(options.get(FRACTION_KEY) or DEFAULT_FRACTION)
    room = _physical() // slots
    address = _address_room()
    if address is not None:
        room = min(room, address)
    return max(int(room * fraction), 1)


def spill_directory(options: Mapping[str, str]) -> str | None:
    return options.get("io.tmp.dirs") or None


@dataclass
class MemoryAccount:
    """A slot's budget and what each of its operators holds now (by operator key)."""

    limit: int  # bytes; 0: no budget
    spill_dir: str | None = None
    held: dict[object, int] = field(default_factory=dict)
    total: int = 0

    def set(self, key: object, size: int) -> bool:
        """Record ``key``'s state size; whether the slot is still within its budget."""
        self.total += size - self.held.get(key, 0)
        self.held[key] = size
        return not self.limit or self.total <= self.limit

    def release(self, key: object) -> None:
        self.total -= self.held.pop(key, 0)


def account_for(options: Mapping[str, str], slots: int = 1) -> MemoryAccount:
    return MemoryAccount(budget_bytes(options, slots), spill_directory(options))


def mib(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB"
