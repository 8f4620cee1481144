"""Benchmark: `roofline.memory.traffic` of a copy of 2**33 float32 elements, time and memory.

The copy ``if (i < n) y[i] = x[i]`` over 2**33 elements is 2**25 blocks of 256 threads: a
grid-sized count would visit 2**25 blocks and hold arrays of that length. The class count
evaluates a handful of blocks, so its time and memory do not grow with the grid. This
prints the best wall time of several runs (goal: under 50 ms), the peak of Python memory
allocations during one run (tracemalloc: numpy's buffers included), and checks the counts
against the closed form (8 bytes per element requested, through L2 and from DRAM), and
that time and memory stay flat from 2**20 to 2**33 elements.

Run with ``python benchmarks/bench_traffic.py`` (``--repeats N``).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import roofline

GOAL_SECONDS = 0.050


def copy_accesses(n: int) -> list[roofline.memory.Access]:
    """The loads and stores of ``if (i < n) y[i] = x[i]``."""
    inside = lambda c: c.x < n  # noqa: E731
    return [
        roofline.memory.Access(array="x", index=lambda c: c.x, guard=inside),
        roofline.memory.Access(array="y", index=lambda c: c.x, guard=inside, kind="store"),
    ]


def measure(n: int, repeats: int, block: int = 256) -> tuple[float, int, roofline.Traffic]:
    """Best time (seconds), peak traced memory (bytes) and the result for ``n`` elements."""
    grid = -(-n // block)
    accesses = copy_accesses(n)
    roofline.memory.traffic(grid, block, accesses)  # warm-up: imports, first numpy calls
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = roofline.memory.traffic(grid, block, accesses)
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    roofline.memory.traffic(grid, block, accesses)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20, help="timed runs per size (best kept)")
    args = parser.parse_args()
    rows = []
    for exponent in (20, 26, 33):
        n = 2**exponent
        seconds, peak, t = measure(n, args.repeats)
        exact = t.requested_bytes == t.l2_bytes == t.dram_bytes == 8 * n
        rows.append((exponent, seconds, peak, exact))
        print(f"copy of 2**{exponent} floats: {seconds * 1e3:7.2f} ms, peak {peak / 2**20:6.2f} MiB, "
              f"counts {'exact' if exact else 'WRONG'} ({t.dram_bytes / 2**30:g} GiB from DRAM)")
    seconds_33, peak_33 = rows[-1][1], rows[-1][2]
    flat = peak_33 < 4 * rows[0][2] + 2**20
    print(f"2**33 elements: {seconds_33 * 1e3:.2f} ms (goal < {GOAL_SECONDS * 1e3:.0f} ms): "
          f"{'met' if seconds_33 < GOAL_SECONDS else 'MISSED'}; memory {'flat' if flat else 'GROWS'} with the grid")
    return 0 if seconds_33 < GOAL_SECONDS and flat and all(r[3] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
