"""Columns where a kernel was written for constants: SUBSTRING(s, pos) with pos a column,
``s LIKE pattern`` with the pattern a column, LPAD(s, n, pad) with n computed per row.

:func:`constants_or_columns` groups a batch's rows by their values at the given argument
positions and runs the kernel once per group with those values as constants. It costs one
kernel call per distinct combination: cheap when the values repeat (patterns from a small
table, widths, separators), slow when nearly every row has its own (a kernel that must be
fast then takes columns itself, as SUBSTRING does: runtime/string_kernels.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def constants_or_columns(kernel: Kernel, positions: tuple[int, ...]) -> Kernel:
    """``kernel``, written for constant arguments at ``positions`` (their values in ``lits``),
    made to take columns there too: the rows are grouped by their values at ``positions`` and
    each group computed with those values as constants (a NULL column is a NULL constant)."""
    def wrapped(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        lits = list(lits)
        columns = [i for i in positions if i < len(args) and lits[i] is None and
                   args[i].null_count != len(args[i])]
        if not columns:
            return kernel(args, lits, out)
        codes, groups = [], []
        for i in columns:
            enc = pc.dictionary_encode(args[i])
            codes.append(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False))
            groups.append(enc.dictionary.to_pylist())
        if len(groups) == 1 and len(groups[0]) == 1 and codes[0].min() >= 0:
            lits[columns[0]] = groups[0][0]  # (one value in the batch: a constant)
            return kernel(args, lits, out)
        uniq, inverse = _groups(codes, [len(g) + 1 for g in groups])
        # The rows of each group, one sort for all of them (not a scan of the batch per group).
        small = np.int16 if len(uniq) < 2**15 else np.int64  # (int16: numpy's radix sort)
        order = np.argsort(inverse.astype(small), kind="stable")
        bounds = np.concatenate(([0], np.cumsum(np.bincount(inverse, minlength=len(uniq)))))
        pieces = []
        for g, row in enumerate(uniq):
            sub_lits = list(lits)
            for i, c, vals in zip(columns, row, groups):
                sub_lits[i] = None if c < 0 else vals[c]
            taken = pa.array(order[bounds[g]:bounds[g + 1]])
            piece = kernel([a.take(taken) for a in args], sub_lits, out)
            pieces.append(piece if piece.type == out else piece.cast(out))
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        return pa.concat_arrays(pieces).take(pa.array(back))

    return wrapped


def _groups(codes: list[np.ndarray], sizes: list[int]) -> tuple[list[list[int]], np.ndarray]:
    """The distinct combinations of the columns' dictionary codes (-1: NULL) and, per row,
    the index of its combination."""
    n = len(codes[0])
    span = 1
    for size in sizes:
        span *= size
    if span >= 2**62:  # (too many combinations for one integer key)
        uniq, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
        return uniq.tolist(), inverse.reshape(-1)
    key = np.zeros(n, dtype=np.int64)
    scale = 1
    for c, size in zip(codes, sizes):
        key += (c.astype(np.int64) + 1) * scale
        scale *= size
    if span <= 2 * n + 1024:  # (keys in a small range: counted, not sorted)
        present = np.flatnonzero(np.bincount(key, minlength=span))
        index = np.full(span, -1, dtype=np.int64)
        index[present] = np.arange(len(present))
        keys, inverse = present, index[key]
    else:
        keys, inverse = np.unique(key, return_inverse=True)
    combos = []
    for k in keys.tolist():
        row = []
        for size in sizes:
            row.append(k % size - 1)
            k //= size
        combos.append(row)
    return combos, inverse.reshape(-1)
