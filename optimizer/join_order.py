"""The order of a tree of inner joins, by cost: the join graph and its enumeration.

A ``JoinGraph`` holds the inputs' estimated rows and the conditions between them, sorted as
Calcite's and DuckDB's join-order code sorts them:

- equivalence classes of columns (``a.x = b.y AND b.y = c.z`` puts x, y and z in one class,
  so ``a`` and ``c`` can join on ``x = z``: transitive equalities);
- key edges: other equalities whose two sides each read one input (hash-join keys);
- other conditions over two or more inputs (residual filters of the join that has them all).

The rows of a set of inputs are the product of their rows times each condition's selectivity
(a class of k inputs with distinct counts d1 >= ... >= dk: 1 / (d1 ... d(k-1)); a key edge:
1 / the larger input; another condition: 1/4, Calcite's default). A plan's cost is the sum of
the rows its joins produce (C_out), plus, for a join with no key to hash on, the pairs a nested
loop compares. ``best_order`` finds the cheapest bushy tree by dynamic programming over subsets
(up to ``DP_LIMIT`` inputs) and greedily beyond (repeatedly the pair whose join is smallest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

DP_LIMIT = 10
OTHER_SELECTIVITY = 0.25

# A join tree over input indexes: an int (an input) or a pair of trees.
Tree = int | tuple["Tree", "Tree"]


@dataclass
class JoinGraph:
    rows: list[float]  # per input
    # classes[k] = {input: distinct values of the class's column(s) in that input}
    classes: list[dict[int, float]] = field(default_factory=list)
    key_edges: list[tuple[int, int]] = field(default_factory=list)  # pairs of inputs
    others: list[frozenset[int]] = field(default_factory=list)  # inputs each one reads

    def __post_init__(self) -> None:
        self._card: dict[int, float] = {}

    @property
    def size(self) -> int:
        return len(self.rows)

    def card(self, s: int) -> float:
        """Estimated rows of joining the inputs of bit set ``s``.

        The inputs are added one at a time in a canonical order (the lowest-numbered input
        a condition links to those before it), so the figure depends on the set only. Adding
        input x through the classes that link it: selectivity 1 / max(d_set, d_x), where
        d_x is the product of x's distinct values in those classes, at most x's rows (a
        composite key is no more distinct than its rows), and d_set the same for the set so
        far (a class's distinct values there: the fewest among its members, as a join keeps
        only values all of them hold). (lineitem and partsupp on (partkey, suppkey): 6M x 800k /
        max(min(200k x 10k, 6M), min(200k x 10k, 800k)) = 800k rows where independent columns
        would give 2,400; the truth is 6M, each line having its partsupp row, which only
        statistics of column pairs would tell.)
        """
        hit = self._card.get(s)
        if hit is not None:
            return hit
        order = self._canonical(s)
        log = math.log(max(self.rows[order[0]], 1.0))
        done = 1 << order[0]
        for x in order[1:]:
            log += math.log(max(self.rows[x], 1.0))
            d_set = d_x = 0.0
            links = 0
            for cls in self.classes:
                if x in cls and any(done >> i & 1 for i in cls):
                    d_set += math.log(max(min(d for i, d in cls.items() if done >> i & 1), 1.0))
                    d_x += math.log(max(cls[x], 1.0))
                    links += 1
            if links:
                rows_set = log - math.log(max(self.rows[x], 1.0))
                log -= max(min(d_set, rows_set), min(d_x, math.log(max(self.rows[x], 1.0))))
            for a, b in self.key_edges:
                if (a == x and done >> b & 1) or (b == x and done >> a & 1):
                    log -= math.log(max(self.rows[a], self.rows[b], 1.0))
            after = done | 1 << x
            for inputs in self.others:
                bits = _bits(inputs)
                if bits & after == bits and bits & done != bits:
                    log += math.log(OTHER_SELECTIVITY)
            done = after
        out = max(math.exp(log), 1.0)
        self._card[s] = out
        return out

    def _canonical(self, s: int) -> list[int]:
        left = _members(s)
        order = [left.pop(0)]
        done = 1 << order[0]
        while left:
            nxt = next((x for x in left if self._linked(done, x)), left[0])
            left.remove(nxt)
            order.append(nxt)
            done |= 1 << nxt
        return order

    def _linked(self, done: int, x: int) -> bool:
        return self.has_keys(done, 1 << x) or any(
            x in inputs and any(done >> i & 1 for i in inputs) for inputs in self.others)

    def has_keys(self, a: int, b: int) -> bool:
        """Whether joining bit sets ``a`` and ``b`` has an equality to hash on."""
        for cls in self.classes:
            if any(a >> i & 1 for i in cls) and any(b >> i & 1 for i in cls):
                return True
        return any((a >> x & 1 and b >> y & 1) or (a >> y & 1 and b >> x & 1)
                   for x, y in self.key_edges)

    def join_cost(self, a: int, b: int) -> float:
        cost = self.card(a | b)
        if not self.has_keys(a, b):
            cost += self.card(a) * self.card(b)  # a nested loop's pairs
        return cost

    def cost(self, tree: Tree) -> float:
        """C_out of ``tree`` (0 for one input)."""
        if isinstance(tree, int):
            return 0.0
        left, right = tree
        return self.cost(left) + self.cost(right) + self.join_cost(bits_of(left),
                                                                   bits_of(right))


def best_order(graph: JoinGraph) -> Tree:
    """The cheapest join tree over all of ``graph``'s inputs."""
    if graph.size <= DP_LIMIT:
        return _dynamic_programming(graph)
    return _greedy(graph)


def _dynamic_programming(graph: JoinGraph) -> Tree:
    n = graph.size
    best: dict[int, tuple[float, Tree]] = {1 << i: (0.0, i) for i in range(n)}
    by_size: list[list[int]] = [[] for _ in range(n + 1)]
    for s in range(1, 1 << n):
        by_size[s.bit_count()].append(s)
    for size in range(2, n + 1):
        for s in by_size[size]:
            low = s & -s
            found: tuple[float, Tree] | None = None
            # Every split of s into two halves, each once (the half holding s's lowest bit
            # is the left one; the tree's sides are swapped below to put the larger left).
            sub = (s - 1) & s
            while sub:
                if sub & low:
                    rest = s ^ sub
                    left, right = best[sub], best[rest]
                    cost = left[0] + right[0] + graph.join_cost(sub, rest)
                    if found is None or cost < found[0]:
                        found = (cost, _pair(graph, sub, left[1], rest, right[1]))
                sub = (sub - 1) & s
            assert found is not None
            best[s] = found
    return best[(1 << n) - 1][1]


def _greedy(graph: JoinGraph) -> Tree:
    """Greedy operator ordering: join the pair with the cheapest join until one tree is left."""
    parts: list[tuple[int, Tree]] = [(1 << i, i) for i in range(graph.size)]
    while len(parts) > 1:
        choice = min(((graph.join_cost(a[0], b[0]), i, j)
                      for i, a in enumerate(parts) for j, b in enumerate(parts) if i < j))
        _, i, j = choice
        (sa, ta), (sb, tb) = parts[i], parts[j]
        merged = (sa | sb, _pair(graph, sa, ta, sb, tb))
        parts = [p for k, p in enumerate(parts) if k not in (i, j)] + [merged]
    return parts[0][1]


def _pair(graph: JoinGraph, a: int, ta: Tree, b: int, tb: Tree) -> Tree:
    """The join of two trees, the larger input on the left (the probe side, as written)."""
    return (ta, tb) if graph.card(a) >= graph.card(b) else (tb, ta)


def bits_of(tree: Tree) -> int:
    if isinstance(tree, int):
        return 1 << tree
    return bits_of(tree[0]) | bits_of(tree[1])


def leaves(tree: Tree) -> list[int]:
    if isinstance(tree, int):
        return [tree]
    return leaves(tree[0]) + leaves(tree[1])


def _members(s: int) -> list[int]:
    out = []
    i = 0
    while s:
        if s & 1:
            out.append(i)
        s >>= 1
        i += 1
    return out


def _bits(inputs: frozenset[int]) -> int:
    out = 0
    for i in inputs:
        out |= 1 << i
    return out
