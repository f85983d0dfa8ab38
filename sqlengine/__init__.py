"""sqlengine: a streaming SQL engine for Flink SQL, on Arrow record batches."""

from __future__ import annotations

from sqlengine.api import Query, Session, connect
from sqlengine.errors import (
    BindError,
    ConnectorError,
    ExecutionError,
    InternalError,
    NotSupportedError,
    OperatorError,
    ParseError,
    PlanError,
    SqlEngineError,
)

__all__ = [
    "BindError",
    "ConnectorError",
    "ExecutionError",
    "InternalError",
    "NotSupportedError",
    "OperatorError",
    "ParseError",
    "PlanError",
    "Query",
    "Session",
    "SqlEngineError",
    "connect",
]
