"""Statement AST: what the lark grammar recognises, as frozen dataclasses with source offsets."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from lark import Token, Transformer, Tree, v_args
from lark.tree import Meta

from sqlengine.errors import ParseError


@dataclass(frozen=True, slots=True)
class QueryText:
    """A query body kept as text; ``offset`` is where it starts in the script."""

    sql: str
    offset: int


@dataclass(frozen=True, slots=True)
class ColumnDef:
    """One column of CREATE TABLE: physical (``type_text``) or computed (``expr``)."""

    name: str
    type_text: str | None
    nullable: bool = True
    expr: QueryText | None = None
    offset: int = 0
    metadata: str | None = None  # METADATA [FROM 'key']: the key (the column's name if none)
    virtual: bool = False
    comment: str | None = None  # COMMENT '...'


@dataclass(frozen=True, slots=True)
class WatermarkDef:
    """``WATERMARK FOR column AS expr``."""

    column: str
    expr: QueryText
    offset: int = 0


@dataclass(frozen=True, slots=True)
class Statement:
    """Base of all statements; ``offset`` and ``text`` locate it in the script."""


@dataclass(frozen=True, slots=True)
class QueryStmt(Statement):
    query: QueryText


@dataclass(frozen=True, slots=True)
class CreateTable(Statement):
    name: str
    columns: tuple[ColumnDef, ...]
    watermark: WatermarkDef | None
    primary_key: tuple[str, ...]
    options: tuple[tuple[str, str], ...]
    option_offsets: tuple[int, ...]
    temporary: bool = False
    if_not_exists: bool = False
    partitioned_by: tuple[str, ...] = ()
    comment: str | None = None
    # LIKE source: (the source table, ((strategy, feature), ...)) as written
    like: tuple[str, tuple[tuple[str, str], ...]] | None = None
    primary_key_name: str = ""  # (CONSTRAINT name PRIMARY KEY ...; '' when not named)
    name_offset: int = 0  # (where the table's name starts in the script)


@dataclass(frozen=True, slots=True)
class CreateTableAs(Statement):
    """CREATE TABLE ... WITH (...) AS query: a table of the query's columns, filled by it."""

    table: CreateTable  # (its columns are filled in from the query when it is bound)
    query: QueryText
    order: tuple[str, ...] = ()  # CREATE TABLE t (c, b, a) AS ...: the query's, reordered


@dataclass(frozen=True, slots=True)
class ReplaceTableAs(Statement):
    """[CREATE OR] REPLACE TABLE ... WITH (...) AS query (Flink's RTAS): the table dropped,
    then created and filled as by CREATE TABLE ... AS."""

    ctas: CreateTableAs
    create: bool  # CREATE OR REPLACE: a table that does not exist is created


@dataclass(frozen=True, slots=True)
class CreateView(Statement):
    name: str
    columns: tuple[str, ...]
    query: QueryText
    temporary: bool = False
    if_not_exists: bool = False
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class Drop(Statement):
    kind: str  # "TABLE" | "VIEW"
    name: str
    if_exists: bool = False
    temporary: bool = False


@dataclass(frozen=True, slots=True)
class Insert(Statement):
    table: str
    columns: tuple[str, ...]
    query: QueryText
    overwrite: bool = False
    table_offset: int = 0
    hint: QueryText | None = None  # INSERT INTO t /*+ OPTIONS(...) */: the hint's text
    # PARTITION (k = 'v', ...): each static partition column's value, as its text
    partition: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class FunctionStatement(Statement):
    """CREATE / DROP [TEMPORARY] [SYSTEM] FUNCTION: ``path`` 'package.module.attr'."""

    create: bool
    name: str
    path: str = ""
    language: str | None = None
    if_exists: bool = False  # (IF NOT EXISTS for a create)
    # 'temporary system', 'temporary' (a temporary catalog function) or 'catalog'
    kind: str = "catalog"


def _function_kind(temporary: object, system: object) -> str:
    if system is not None and temporary is None:  # (as Flink's parser)
        raise ParseError("CREATE / DROP SYSTEM FUNCTION: a system function is always "
                         "temporary (write TEMPORARY SYSTEM FUNCTION)")
    if system is not None:
        return "temporary system"
    return "temporary" if temporary is not None else "catalog"


@dataclass(frozen=True, slots=True)
class CatalogStatement(Statement):
    """CREATE / DROP CATALOG / DATABASE and USE [CATALOG | MODULES]: ``action`` is
    'create_catalog', 'create_database', 'drop_catalog', 'drop_database', 'use_catalog',
    'use_database' or 'use_modules' (``name``: the modules, comma-separated)."""

    action: str
    name: str
    if_exists: bool = False  # (IF NOT EXISTS for a create)
    cascade: bool = False
    options: tuple[tuple[str, str], ...] = ()
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class AlterTable(Statement):
    """ALTER TABLE name <action>: ``action`` is 'rename' (``new_name``), 'rename_column'
    (``column`` -> ``new_name``), 'set' (``options``), 'reset' (``keys``), 'add' or 'modify'
    (``columns``, each at its ``positions``: '' the end (for 'modify': where it is), 'FIRST'
    or the column to follow, in turn; a ``watermark``; a PRIMARY KEY's columns as ``keys``,
    its constraint's name ``new_name``), 'drop' (``keys`` as column names), 'drop_key' (the
    primary key; ``new_name`` the constraint's name when DROP CONSTRAINT names it) or
    'drop_watermark'."""

    name: str
    if_exists: bool
    action: str
    new_name: str = ""
    column: str = ""
    options: tuple[tuple[str, str], ...] = ()
    keys: tuple[str, ...] = ()
    columns: tuple[ColumnDef, ...] = ()
    positions: tuple[str, ...] = ()  # (each added column's: see above)
    watermark: WatermarkDef | None = None  # ADD WATERMARK FOR ...


@dataclass(frozen=True, slots=True)
class AlterView(Statement):
    """ALTER VIEW name RENAME TO new_name | AS query."""

    name: str
    new_name: str = ""
    query: QueryText | None = None


@dataclass(frozen=True, slots=True)
class StatementSet(Statement):
    """EXECUTE STATEMENT SET BEGIN ... END: INSERTs planned and run as one job."""

    inserts: tuple[Insert, ...]


@dataclass(frozen=True, slots=True)
class Set(Statement):
    key: str | None
    value: str | None


@dataclass(frozen=True, slots=True)
class Reset(Statement):
    key: str | None


@dataclass(frozen=True, slots=True)
class StopJob(Statement):
    """STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN] (the shell's background jobs)."""

    job_id: str
    savepoint: bool = False
    drain: bool = False


@dataclass(frozen=True, slots=True)
class ShowLike:
    """[NOT] LIKE / ILIKE 'pattern' after SHOW: SQL LIKE's % (any run) and _ (one character);
    LIKE is case-sensitive, ILIKE not (as Flink's)."""

    pattern: str
    negated: bool = False
    ignore_case: bool = False

    def keeps(self, name: str) -> bool:
        import re

        regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c)
                        for c in self.pattern)
        flags = re.DOTALL | (re.IGNORECASE if self.ignore_case else 0)
        return bool(re.fullmatch(regex, name, flags)) != self.negated


@dataclass(frozen=True, slots=True)
class Show(Statement):
    """SHOW TABLES / VIEWS / [USER] FUNCTIONS [FROM [catalog.]database], SHOW DATABASES [FROM
    catalog], SHOW CATALOGS, each [[NOT] LIKE / ILIKE 'pattern']; SHOW CURRENT ..., JOBS."""

    what: str
    source: str | None = None  # FROM / IN
    like: ShowLike | None = None


@dataclass(frozen=True, slots=True)
class ShowCreate(Statement):
    kind: str  # TABLE | VIEW
    name: str


@dataclass(frozen=True, slots=True)
class ShowColumns(Statement):
    """SHOW COLUMNS FROM t [[NOT] LIKE 'pattern']: DESCRIBE's rows, filtered by name."""

    name: str
    like: ShowLike | None = None


@dataclass(frozen=True, slots=True)
class Describe(Statement):
    name: str
    offset: int = 0
    extended: bool = False  # (DESCRIBE EXTENDED: the same columns, as Flink's)


@dataclass(frozen=True, slots=True)
class Explain(Statement):
    details: tuple[str, ...]
    statement: QueryStmt | Insert | StatementSet


def unquote_string(token: str) -> str:
    """``'it''s'`` -> ``it's``."""
    return token[1:-1].replace("''", "'")


def unquote_ident(token: str) -> str:
    """A bare name as written, or a backtick-quoted one without its quotes."""
    if token.startswith("`"):
        return token[1:-1].replace("``", "`")
    return token


def _text(token: Token, base: int) -> QueryText:
    return QueryText(str(token).rstrip(), base + token.start_pos)


class StatementBuilder(Transformer):
    """lark parse tree -> Statement; ``text`` is the statement, ``base`` its script offset."""

    def __init__(self, text: str, base: int) -> None:
        super().__init__()
        self.text = text
        self.base = base

    def _span_text(self, tree_meta: Meta) -> QueryText:
        start = tree_meta.start_pos
        end = tree_meta.end_pos
        return QueryText(self.text[start:end], self.base + start)

    # -- lexical ---------------------------------------------------------------------------
    def NAME(self, tok: Token) -> Token:
        return tok

    def name(self, items: list[Token]) -> str:
        return ".".join(unquote_ident(str(i)) for i in items)

    @v_args(meta=True)
    def new_table_name(self, meta: Meta, items: list[str]) -> _Name:
        return _Name(items[0], self.base + meta.start_pos)

    def dotted_key(self, items: list[Token]) -> str:
        return ".".join(unquote_ident(str(i)) for i in items)

    # -- statements ------------------------------------------------------------------------
    def start(self, items: list[Statement]) -> Statement:
        return items[0]

    def query(self, items: list[Token]) -> QueryStmt:
        return QueryStmt(_text(items[0], self.base))

    @v_args(meta=True)
    def type_text(self, meta: Meta, items: list) -> str:
        words = [i for i in items if isinstance(i, _TypeWord)]
        text = self._span_text(meta).sql
        for w in words:
            w.start -= meta.start_pos  # (in the type's text)
        if not words:
            return text
        for i, w in enumerate(words):
            upper = w.upper()
            if upper in ("ARRAY", "MULTISET") or (upper == "NULL" and i == len(words) - 1):
                continue
            raise ParseError(f"unexpected {str(w)!r} after the type {text[:w.start].strip()} "
                             "(INT ARRAY, STRING MULTISET, NULL or NOT NULL may follow one)")
        if words[-1].upper() == "NULL":  # ('a INT NULL': the type is what comes before)
            return text[:words[-1].start].rstrip()
        return text

    @v_args(meta=True)
    def type_word(self, meta: Meta, items: list) -> _TypeWord:
        return _TypeWord(str(items[0]), meta.start_pos)

    @v_args(meta=True)
    def expr_text(self, meta: Meta, items: list) -> QueryText:
        return self._span_text(meta)

    @v_args(meta=True)
    def physical_column(self, meta: Meta, items: list) -> ColumnDef:
        name, type_text = items[0], items[1]
        nullable = not any(isinstance(i, Tree) and i.data == "not_null" for i in items[2:])
        spec = next((i for i in items[2:] if isinstance(i, tuple)), None)
        column = unquote_ident(str(name))
        col = ColumnDef(column, type_text, nullable, offset=self.base + meta.start_pos,
                        metadata=(spec[0] or column) if spec else None,
                        virtual=bool(spec and spec[1]),
                        comment=next((i for i in items if isinstance(i, _Comment)), None))
        key = next((i for i in items[2:] if isinstance(i, Tree) and i.data == "column_key"),
                   None)
        if key is not None:
            named = key.children[0]
            return _KeyColumn((col, _PrimaryKey(
                (column,), unquote_ident(str(named)) if named is not None else "")))
        return col

    def metadata_spec(self, items: list) -> tuple[str | None, bool]:
        key = next((unquote_string(str(i)) for i in items
                    if isinstance(i, Token) and i.type == "STRING"), None)
        virtual = any(isinstance(i, Token) and i.type == "VIRTUAL_KW" for i in items)
        return (key, virtual)

    @v_args(meta=True)
    def computed_column(self, meta: Meta, items: list) -> ColumnDef:
        return ColumnDef(unquote_ident(str(items[0])), None, True, expr=items[1],
                         offset=self.base + meta.start_pos,
                         comment=next((i for i in items if isinstance(i, _Comment)), None))

    def column_comment(self, items: list) -> _Comment:
        return _Comment(unquote_string(str(items[0])))

    @v_args(meta=True)
    def watermark(self, meta: Meta, items: list) -> WatermarkDef:
        return WatermarkDef(unquote_ident(str(items[0])), items[1],
                            self.base + meta.start_pos)

    @v_args(meta=True)
    def primary_key(self, meta: Meta, items: list) -> _PrimaryKey:
        # With a CONSTRAINT name, the first identifier is the constraint's name.
        cols = [unquote_ident(str(i)) for i in items if i is not None]
        named = bool(items) and items[0] is not None
        key = _PrimaryKey(cols[1:] if named else cols, cols[0] if named else "")
        key.offset = self.base + meta.start_pos
        return key

    def table_element(self, items: list) -> object:
        return items[0]

    def table_comment(self, items: list) -> str:
        return unquote_string(str(items[0]))

    def partitioned_by(self, items: list) -> _Partitioned:
        return _Partitioned(unquote_ident(str(i)) for i in items)

    def option(self, items: list[Token]) -> tuple[str, str, int]:
        return (unquote_string(str(items[0])), unquote_string(str(items[1])),
                self.base + items[0].start_pos)

    def with_options(self, items: list) -> list:
        return [i for i in items if not (isinstance(i, Token) and i.type == "WITH_OPTIONS")]

    def create_table(self, items: list) -> CreateTable:
        temporary, if_not_exists, name = items[0], items[1], items[2]
        name_offset = getattr(name, "offset", 0)
        name = str(name)
        columns: list[ColumnDef] = []
        watermark = None
        pk: tuple[str, ...] = ()
        pk_name = ""
        comment = None
        partitioned: tuple[str, ...] = ()
        options: list = []
        like = None
        for item in items[3:]:
            if isinstance(item, _KeyColumn):
                item, key = item
                if pk:
                    raise _placed(ParseError("a table has one PRIMARY KEY: the column "
                                             f"{item.name!r} declares another"), item.offset)
                pk, pk_name = tuple(key), key.name
            if isinstance(item, ColumnDef):
                columns.append(item)
            elif isinstance(item, WatermarkDef):
                if watermark is not None:  # (as Flink: "Multiple watermark definition")
                    raise _placed(ParseError(f"a table has one WATERMARK: FOR "
                                             f"{watermark.column} is one, FOR {item.column} "
                                             "another"), item.offset)
                watermark = item
            elif isinstance(item, _PrimaryKey):
                if pk:
                    raise _placed(ParseError(f"a table has one PRIMARY KEY: ({', '.join(pk)}) "
                                             f"is one, ({', '.join(item)}) another"),
                                  item.offset)
                pk, pk_name = tuple(item), item.name
            elif isinstance(item, _Partitioned):
                partitioned = tuple(item)
            elif isinstance(item, str):
                comment = item
            elif isinstance(item, list):
                options = item
            elif isinstance(item, _Like):
                like = (item[0], item[1])
        return CreateTable(
            name=str(name),
            columns=tuple(columns),
            watermark=watermark,
            primary_key=pk,
            options=tuple((k, v) for k, v, _ in options),
            option_offsets=tuple(o for _, _, o in options),
            temporary=temporary is not None,
            if_not_exists=if_not_exists is not None,
            partitioned_by=partitioned,
            comment=comment,
            like=like,
            primary_key_name=pk_name,
            name_offset=name_offset,
        )

    def like_option(self, items: list[Token]) -> tuple[str, str]:
        return (str(items[0]).upper(), str(items[1]).upper())

    def like_clause(self, items: list) -> _Like:
        return _Like((items[1], tuple(i for i in items[2:] if i is not None)))

    def create_table_as(self, items: list) -> CreateTableAs:
        query = _text(items[-1], self.base)
        order = next((i for i in items if isinstance(i, _CtasColumns)), ())
        return CreateTableAs(self.create_table([i for i in items[:-1]
                                                if not isinstance(i, _CtasColumns)]),
                             query, tuple(order))

    def create_or(self, items: list) -> bool:
        return True

    def replace_table_as(self, items: list) -> ReplaceTableAs:
        # (a CREATE TABLE ... AS with neither TEMPORARY nor IF NOT EXISTS)
        return ReplaceTableAs(self.create_table_as([None, None, *items[1:]]),
                              items[0] is not None)

    def ctas_columns(self, items: list) -> _CtasColumns:
        return _CtasColumns(unquote_ident(str(i)) for i in items)

    def view_columns(self, items: list) -> tuple[str, ...]:
        return tuple(unquote_ident(str(i)) for i in items)

    def create_view(self, items: list) -> CreateView:
        temporary, if_not_exists, name = items[0], items[1], items[2]
        rest = items[3:]
        columns: tuple[str, ...] = next((r for r in rest[:-1] if isinstance(r, tuple)), ())
        comment = next((r for r in rest[:-1] if isinstance(r, str)), None)
        return CreateView(name, columns, _text(rest[-1], self.base),
                          temporary is not None, if_not_exists is not None, comment)

    def create_function(self, items: list) -> FunctionStatement:
        temporary, system, if_not_exists, name, path, _lang, language = items
        return FunctionStatement(True, name, unquote_string(str(path)),
                                 str(language) if language is not None else None,
                                 if_not_exists is not None, _function_kind(temporary, system))

    def drop_function(self, items: list) -> FunctionStatement:
        temporary, system, if_exists, name = items
        return FunctionStatement(False, name, if_exists=if_exists is not None,
                                 kind=_function_kind(temporary, system))

    def create_catalog(self, items: list) -> CatalogStatement:
        options = items[2] if len(items) > 2 and items[2] is not None else []
        return CatalogStatement("create_catalog", unquote_ident(str(items[1])),
                                items[0] is not None, options=tuple((k, v) for k, v, _ in options))

    def create_database(self, items: list) -> CatalogStatement:
        comment = next((i for i in items[2:] if isinstance(i, str)), None)
        options = next((i for i in items[2:] if isinstance(i, list)), [])
        return CatalogStatement("create_database", items[1], items[0] is not None,
                                options=tuple((k, v) for k, v, _ in options), comment=comment)

    def drop_catalog(self, items: list) -> CatalogStatement:
        return CatalogStatement("drop_catalog", unquote_ident(str(items[1])),
                                items[0] is not None)

    def drop_database(self, items: list) -> CatalogStatement:
        return CatalogStatement("drop_database", items[1], items[0] is not None,
                                cascade=items[2] is not None and
                                str(items[2]).upper() == "CASCADE")

    def use_catalog(self, items: list) -> CatalogStatement:
        return CatalogStatement("use_catalog", unquote_ident(str(items[1])))

    def use_modules(self, items: list) -> CatalogStatement:
        return CatalogStatement("use_modules", ",".join(unquote_ident(str(i))
                                                        for i in items[1:]))

    def use_database(self, items: list) -> CatalogStatement:
        return CatalogStatement("use_database", items[0])

    def alter_table(self, items: list) -> AlterTable:
        if_exists, name, action = items
        return replace(action, name=name, if_exists=if_exists is not None)

    def alter_rename(self, items: list) -> AlterTable:
        return AlterTable("", False, "rename", new_name=items[0])

    def alter_rename_column(self, items: list) -> AlterTable:
        return AlterTable("", False, "rename_column", column=unquote_ident(str(items[0])),
                          new_name=unquote_ident(str(items[1])))

    def alter_set(self, items: list) -> AlterTable:
        return AlterTable("", False, "set", options=tuple((k, v) for k, v, _ in items))

    def alter_reset(self, items: list) -> AlterTable:
        return AlterTable("", False, "reset",
                          keys=tuple(unquote_string(str(i)) for i in items))

    def column_position(self, items: list) -> str:
        if str(items[0]).upper() == "FIRST":
            return "FIRST"
        return unquote_ident(str(items[1]))

    def positioned(self, items: list) -> _Positioned:
        return _Positioned((items[0], items[1] if len(items) > 1 else ""))

    def alter_modify(self, items: list) -> AlterTable:
        return replace(self.alter_add(items), action="modify")

    def alter_drop_key(self, items: list) -> AlterTable:
        return AlterTable("", False, "drop_key",
                          new_name=unquote_ident(str(items[0])) if items else "")

    def alter_drop_watermark(self, items: list) -> AlterTable:
        return AlterTable("", False, "drop_watermark")

    def alter_view_rename(self, items: list) -> AlterView:
        return AlterView(items[0], new_name=items[1])

    def alter_view_as(self, items: list) -> AlterView:
        return AlterView(items[0], query=_text(items[1], self.base))

    def alter_add(self, items: list) -> AlterTable:
        if len(items) == 2 and isinstance(items[1], str):  # (ADD col FIRST | AFTER c)
            items = [_Positioned((items[0], items[1]))]
        placed = [i if isinstance(i, _Positioned) else _Positioned((i, "")) for i in items
                  if isinstance(i, _Positioned | ColumnDef | _KeyColumn)]
        keys = [i for i in items if isinstance(i, _PrimaryKey)] + \
            [c for c, _ in placed if isinstance(c, _KeyColumn)]
        if len(keys) > 1:
            raise ParseError("ALTER TABLE: one PRIMARY KEY at most")
        columns = tuple(c[0] if isinstance(c, _KeyColumn) else c for c, _ in placed)
        watermark = next((i for i in items if isinstance(i, WatermarkDef)), None)
        key = keys[0] if keys else ()
        key = key[1] if isinstance(key, _KeyColumn) else key
        return AlterTable("", False, "add", columns=columns,
                          positions=tuple(p for _, p in placed), watermark=watermark,
                          keys=tuple(key), new_name=getattr(key, "name", ""))

    def alter_drop(self, items: list) -> AlterTable:
        return AlterTable("", False, "drop", keys=tuple(unquote_ident(str(i)) for i in items))

    def drop(self, items: list) -> Drop:
        temporary, kind, if_exists, name = items
        return Drop(str(kind).upper(), name, if_exists is not None, temporary is not None)

    def insert_columns(self, items: list) -> tuple[str, ...]:
        return tuple(unquote_ident(str(i)) for i in items)

    def partition_value(self, items: list) -> tuple[str, str]:
        value = str(items[1])
        return (unquote_ident(str(items[0])),
                unquote_string(value) if value.startswith("'") else value)

    def partition_spec(self, items: list) -> tuple[tuple[str, str], ...]:
        return tuple(items[1:])

    @v_args(meta=True)
    def insert(self, meta: Meta, items: list) -> Insert:
        mode, name, hint, partition, columns = items[0], items[1], items[2], items[3], items[4]
        return Insert(name, columns or (), _text(items[-1], self.base),
                      str(mode).upper() == "OVERWRITE", self.base + mode.end_pos + 1,
                      None if hint is None else _text(hint, self.base), partition or ())

    def set_pair(self, items: list) -> tuple[str, str]:
        return (_setting(items[0]), _setting(items[1]))

    def set_stmt(self, items: list) -> Set:
        pair = items[0]
        return Set(None, None) if pair is None else Set(pair[0], pair[1])

    def reset_stmt(self, items: list) -> Reset:
        return Reset(None if items[0] is None else _setting(items[0]))

    def stop_job(self, items: list) -> StopJob:
        return StopJob(unquote_string(str(items[0])), items[1] is not None,
                       items[2] is not None)

    def show(self, items: list) -> Show:
        what, _from, source, like = items
        return Show(" ".join(str(what).upper().split()), source, like)

    def show_columns(self, items: list) -> ShowColumns:
        _from, name, like = items
        return ShowColumns(name, like)

    def show_like(self, items: list) -> ShowLike:
        negated, word, pattern = items
        return ShowLike(unquote_string(str(pattern)), negated is not None,
                        str(word).upper() == "ILIKE")

    def show_create(self, items: list) -> ShowCreate:
        return ShowCreate(str(items[0]).upper(), items[1])

    @v_args(meta=True)
    def describe(self, meta: Meta, items: list) -> Describe:
        before = items[1] if items[1] is not None else items[0]
        return Describe(items[2], self.base + before.end_pos + 1, items[1] is not None)

    def explain_detail(self, items: list) -> str:
        return str(items[0]).upper()

    def explain(self, items: list) -> Explain:
        details = tuple(i for i in items[1:-1] if isinstance(i, str))
        return Explain(details, items[-1])


class _TypeWord(str):
    """A word after a column's type (ARRAY, MULTISET, NULL) and where it starts."""

    start: int

    def __new__(cls, text: str, start: int) -> _TypeWord:
        word = super().__new__(cls, text)
        word.start = start
        return word


class _Comment(str):
    """A column's COMMENT text."""


class _Name(str):
    """CREATE TABLE's (dotted) name as written; ``offset``: where it starts in the script
    (``create_table`` keeps the offset and hands on a plain ``str``)."""

    offset: int

    def __new__(cls, text: str, offset: int = 0) -> _Name:
        name = super().__new__(cls, text)
        name.offset = offset
        return name


class _KeyColumn(tuple):
    """A column declared with its own PRIMARY KEY constraint: (ColumnDef, _PrimaryKey)."""


def _placed(error: ParseError, offset: int) -> ParseError:
    """``error`` with where in the script it is (parse_statement makes it a place)."""
    error.offset = offset  # type: ignore[attr-defined]
    return error


class _PrimaryKey(tuple):
    """A PRIMARY KEY's columns; ``name``: its CONSTRAINT's name ('' when not named);
    ``offset``: where a table's PRIMARY KEY (...) starts in the script."""

    name: str
    offset: int = 0

    def __new__(cls, columns: Iterable[str], name: str = "") -> _PrimaryKey:
        key = super().__new__(cls, columns)
        key.name = name
        return key


class _Positioned(tuple):
    """An added column and its position: (ColumnDef | _KeyColumn, '' | 'FIRST' | column)."""


class _Like(tuple):
    pass


class _CtasColumns(tuple):
    """CREATE TABLE t (c, b, a) AS ...: the query's column names, in the table's order."""


class _Partitioned(tuple):
    pass


def _setting(item: object) -> str:
    text = str(item)
    if text.startswith("'"):
        return unquote_string(text)
    return text
