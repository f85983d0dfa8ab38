"""sqlengine: a streaming SQL engine for Flink SQL, on Arrow record batches.

The door (``connect``, ``Session``, ``Query``; sqlengine/api.py) is loaded on first use, so that
``from sqlengine.errors import ...`` or ``import sqlengine`` stay light: the door imports the
optimizer and the runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sqlengine import code_cache
from sqlengine.cache_dir import user_cache_directory

# (before any dataclass of sqlengine is built: their compiled methods come from the cache file)
code_cache.install(user_cache_directory())

from sqlengine.errors import (  # noqa: E402
    BindError,
    ConnectorError,
    DatabaseError,
    DataError,
    Error,
    ExecutionError,
    IntegrityError,
    InterfaceError,
    InternalError,
    NotSupportedError,
    OperationalError,
    OperatorError,
    ParseError,
    PlanError,
    ProgrammingError,
    SqlEngineError,
    Warning,
)

if TYPE_CHECKING:
    from sqlengine.api import Session, connect
    from sqlengine.functions_python import udaf, udf, udtf
    from sqlengine.python_row import Row
    from sqlengine.query import Query

_DOOR = {"connect": "sqlengine.api", "Session": "sqlengine.api", "Query": "sqlengine.query",
         "udf": "sqlengine.functions_python", "udtf": "sqlengine.functions_python",
         "udaf": "sqlengine.functions_python", "Row": "sqlengine.python_row"}


# PEP 249's module globals and exceptions (the cursor lives in sqlengine/dbapi.py).
apilevel = "2.0"
threadsafety = 1
paramstyle = "named"
_DBAPI = ("STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp",
          "Binary", "DateFromTicks", "TimeFromTicks", "TimestampFromTicks")


def __getattr__(name: str) -> Any:
    if name in _DBAPI:
        value = getattr(importlib.import_module("sqlengine.dbapi"), name)
        globals()[name] = value
        return value
    if name in _DOOR:
        value = getattr(importlib.import_module(_DOOR[name]), name)
        globals()[name] = value
        return value
    if name in ("api", "query"):
        return importlib.import_module(f"sqlengine.{name}")
    raise AttributeError(f"module 'sqlengine' has no attribute {name!r}")


__all__ = [
    "BindError",
    "ConnectorError",
    "DataError",
    "DatabaseError",
    "Error",
    "IntegrityError",
    "InterfaceError",
    "OperationalError",
    "ProgrammingError",
    "Warning",
    "apilevel",
    "paramstyle",
    "threadsafety",
    "ExecutionError",
    "InternalError",
    "NotSupportedError",
    "OperatorError",
    "ParseError",
    "PlanError",
    "Query",
    "Row",
    "Session",
    "SqlEngineError",
    "connect",
    "udaf",
    "udf",
    "udtf",
]
