"""Flink's documented built-in SQL functions, family by family (issue 19's coverage count).

Source: the "System (Built-in) Functions" page (docs/dev/table/functions/systemfunctions), whose
tables are generated from ``docs/data/sql_functions.yml`` of apache/flink, read at commit
a56691a54801a11cb558a0449f439ad8a559d5d6 (the newest copy the library holds; the repository
itself could not be fetched, 865 MB). Every entry with a ``sql:`` key is here under its YAML
family, by its SQL name (operators by their syntax: ``=``, ``IS DISTINCT FROM``, ``LIKE``,
``CASE``...); entries with only a ``table:`` key (Table API: ``NUMERIC.years``, ``callSql``,
``FIELD.sum0``, the auxiliary family, column functions) are left out. Where one YAML entry
names two functions (``CHAR_LENGTH`` / ``CHARACTER_LENGTH``, ``CEIL`` / ``CEILING``,
``GROUPING`` / ``GROUPING_ID``, ``ROW`` / the implicit ``(v1, v2)``) each is listed; where two
entries share a name with different syntax, the name says which (``CEIL(timepoint TO unit)``,
``CARDINALITY(map)``, ``IN (sub-query)``, ``CASE value WHEN`` / ``CASE WHEN``). The YAML's
family keys are kept (``hashfunctions`` as ``hash``, ``valueconstruction`` / ``valueaccess``);
PERCENTILE stays under arithmetic and JSON_QUOTE / JSON_UNQUOTE / ELT under string, as there.

That YAML copy predates Flink 2.1: the functions Flink 2.3 itself registers as built-in
(``SHOW FUNCTIONS`` under PyFlink 2.3) beyond it are in ``FLINK_23_EXTRA`` -- checked too, but
counted apart, since their documentation could not be read here.
"""

from __future__ import annotations

FLINK_DOCS_SOURCE = ("apache/flink docs/data/sql_functions.yml @ "
                     "a56691a54801a11cb558a0449f439ad8a559d5d6")

FLINK_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "comparison": (
        "=", "<>", ">", ">=", "<", "<=", "IS NULL", "IS NOT NULL", "IS DISTINCT FROM",
        "IS NOT DISTINCT FROM", "BETWEEN", "NOT BETWEEN", "LIKE", "NOT LIKE", "SIMILAR TO",
        "NOT SIMILAR TO", "IN", "NOT IN", "EXISTS", "IN (sub-query)", "NOT IN (sub-query)",
    ),
    "logical": (
        "OR", "AND", "NOT", "IS FALSE", "IS NOT FALSE", "IS TRUE", "IS NOT TRUE", "IS UNKNOWN",
        "IS NOT UNKNOWN",
    ),
    "arithmetic": (
        "+ (unary)", "- (unary)", "+", "-", "*", "/", "%", "POWER", "ABS", "SQRT", "LN",
        "LOG10", "LOG2", "LOG", "EXP", "CEIL", "CEILING", "FLOOR", "SIN", "SINH", "COS", "TAN",
        "TANH", "COT", "ASIN", "ACOS", "ATAN", "ATAN2", "COSH", "DEGREES", "RADIANS", "SIGN",
        "ROUND", "PI", "E", "RAND", "RAND_INTEGER", "UUID", "BIN", "HEX", "UNHEX", "TRUNCATE",
        "PERCENTILE",
    ),
    "string": (
        "||", "CHAR_LENGTH", "CHARACTER_LENGTH", "UPPER", "LOWER", "POSITION", "PRINTF", "TRIM",
        "LTRIM", "RTRIM", "BTRIM", "REPEAT", "REGEXP_REPLACE", "OVERLAY", "STARTSWITH",
        "ENDSWITH", "SUBSTRING", "REPLACE", "REGEXP_COUNT", "REGEXP_EXTRACT",
        "REGEXP_EXTRACT_ALL", "REGEXP_INSTR", "REGEXP_SUBSTR", "TRANSLATE", "INITCAP", "CONCAT",
        "CONCAT_WS", "LPAD", "RPAD", "FROM_BASE64", "TO_BASE64", "ASCII", "CHR", "DECODE",
        "ENCODE", "INSTR", "LEFT", "RIGHT", "LOCATE", "URL_DECODE", "URL_ENCODE", "PARSE_URL",
        "REGEXP", "REVERSE", "SPLIT_INDEX", "STR_TO_MAP", "SUBSTR", "JSON_QUOTE", "JSON_UNQUOTE",
        "ELT",
    ),
    "temporal": (
        "DATE", "TIME", "TIMESTAMP", "INTERVAL", "LOCALTIME", "LOCALTIMESTAMP", "CURRENT_TIME",
        "CURRENT_DATE", "CURRENT_TIMESTAMP", "NOW", "CURRENT_ROW_TIMESTAMP", "EXTRACT", "YEAR",
        "QUARTER", "MONTH", "WEEK", "DAYOFYEAR", "DAYOFMONTH", "DAYOFWEEK", "HOUR", "MINUTE",
        "SECOND", "FLOOR(timepoint TO unit)", "CEIL(timepoint TO unit)", "OVERLAPS",
        "DATE_FORMAT", "TIMESTAMPADD", "TIMESTAMPDIFF", "CONVERT_TZ", "FROM_UNIXTIME",
        "UNIX_TIMESTAMP", "TO_DATE", "TO_TIMESTAMP_LTZ", "TO_TIMESTAMP", "CURRENT_WATERMARK",
    ),
    "conditional": (
        "CASE value WHEN", "CASE WHEN", "NULLIF", "COALESCE", "IF", "IFNULL", "IS_ALPHA",
        "IS_DECIMAL", "IS_DIGIT", "GREATEST", "LEAST",
    ),
    "conversion": ("CAST", "TRY_CAST", "TYPEOF"),
    "collection": (
        "CARDINALITY(array)", "array[index]", "ELEMENT", "CARDINALITY(map)", "map[key]",
        "ARRAY_APPEND", "ARRAY_CONTAINS", "ARRAY_DISTINCT", "ARRAY_POSITION", "ARRAY_PREPEND",
        "ARRAY_REMOVE", "ARRAY_REVERSE", "ARRAY_SLICE", "ARRAY_SORT", "ARRAY_UNION",
        "ARRAY_CONCAT", "ARRAY_EXCEPT", "ARRAY_INTERSECT", "ARRAY_MAX", "ARRAY_JOIN",
        "ARRAY_MIN", "MAP_KEYS", "MAP_UNION", "MAP_VALUES", "MAP_ENTRIES", "MAP_FROM_ARRAYS",
        "SPLIT",
    ),
    "json": (
        "IS JSON", "JSON_EXISTS", "JSON_STRING", "JSON_VALUE", "JSON_QUERY", "JSON_OBJECT",
        "JSON_ARRAY",
    ),
    "valueconstruction": ("ROW", "(value1, value2) implicit row", "ARRAY", "MAP"),
    "valueaccess": ("compositeType.field", "compositeType.*"),
    "grouping": ("GROUP_ID", "GROUPING", "GROUPING_ID"),
    "hash": ("MD5", "SHA1", "SHA224", "SHA256", "SHA384", "SHA512", "SHA2"),
    "aggregate": (
        "COUNT", "COUNT(*)", "AVG", "SUM", "MAX", "MIN", "STDDEV_POP", "STDDEV_SAMP", "VAR_POP",
        "VAR_SAMP", "COLLECT", "VARIANCE", "RANK", "DENSE_RANK", "ROW_NUMBER", "LEAD", "LAG",
        "FIRST_VALUE", "LAST_VALUE", "LISTAGG", "CUME_DIST", "PERCENT_RANK", "NTILE",
        "ARRAY_AGG", "JSON_OBJECTAGG", "JSON_ARRAYAGG",
    ),
    "catalog": ("CURRENT_DATABASE",),
}

# Built-in SQL functions Flink 2.3 registers (SHOW FUNCTIONS, PyFlink 2.3) that the YAML copy
# above does not list: added in Flink 2.1 - 2.3. Left out of that list: internal names
# (AGG_DECIMAL_*, HIVE_AGG_DECIMAL_PLUS, ASSIGNMENT, DEFAULT, JSON, IS_JSON, LIKE, TRANSLATE3,
# JSON_*AGG_{NULL,ABSENT}_ON_NULL), the Table API's camelCase names, SOURCE_WATERMARK (DDL
# only) and the table-valued ML_PREDICT / FROM_CHANGELOG / TO_CHANGELOG (not on this page).
FLINK_23_EXTRA: tuple[str, ...] = (
    "OBJECT_OF", "OBJECT_UPDATE", "PARSE_JSON", "TRY_PARSE_JSON", "INET_ATON", "INET_NTOA",
    "BITMAP_BUILD", "BITMAP_CARDINALITY", "BITMAP_AND", "BITMAP_ANDNOT", "BITMAP_OR",
    "BITMAP_XOR", "BITMAP_TO_ARRAY", "BITMAP_TO_BYTES", "BITMAP_FROM_BYTES", "BITMAP_TO_STRING",
    "BITMAP_BUILD_AGG", "BITMAP_BUILD_CARDINALITY_AGG", "BITMAP_AND_AGG",
    "BITMAP_AND_CARDINALITY_AGG", "BITMAP_OR_AGG", "BITMAP_OR_CARDINALITY_AGG",
    "BITMAP_XOR_AGG", "BITMAP_XOR_CARDINALITY_AGG",
)


def all_documented() -> list[tuple[str, str]]:
    """(family, name) for every documented function, in the page's order."""
    return [(fam, name) for fam, names in FLINK_FUNCTIONS.items() for name in names]
