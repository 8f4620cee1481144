"""Access descriptions of the corpus's rodinia kernels (see the package docstring)."""

from __future__ import annotations

import numpy as np

from roofline.memory import Access, Coords

from ._description import Describe, Description, tokens

__all__ = ["KERNELS"]

KERNELS: dict[str, Describe] = {}


# ----------------------------------------------------------------------------- nn


def _euclid(launch) -> Description:
    """nn: thread i reads record i's latitude and longitude (two floats of an 8-byte struct), writes distance i."""
    n = int(tokens(launch.shape)["records"])

    def inside(c: Coords):
        return c.x < n

    return Description(accesses=(
        Access(array="locations", index=lambda c: 2 * c.x, guard=inside),
        Access(array="locations", index=lambda c: 2 * c.x + 1, guard=inside),
        Access(array="distances", index=lambda c: c.x, guard=inside, kind="store"),
    ))


KERNELS["nn.euclid"] = _euclid


# ----------------------------------------------------------------------------- gaussian


def _fan1(launch) -> Description:
    """Thread i (i < n-1-t) divides a[t+1+i][t] by the pivot a[t][t] into m[t+1+i][t]: a column, stride n."""
    t = tokens(launch.shape)
    n, step = int(t["n"]), int(t["t"])

    def inside(c: Coords):
        return c.x < n - 1 - step

    def below(c: Coords):
        return n * (c.x + step + 1) + step

    return Description(accesses=(
        Access(array="a", index=below, guard=inside),
        Access(array="a", index=lambda c: 0 * c.x + n * step + step, guard=inside),
        Access(array="m", index=below, guard=inside, kind="store"),
    ))


def _fan2(launch) -> Description:
    """Thread (x, y) updates a[t+1+x][t+y] -= m[t+1+x][t] * a[t][t+y]; the threads of y = 0 also
    update b[t+1+x] -= m[t+1+x][t] * b[t] (x runs down the rows: a warp's lanes are rows apart).

    For t > 0 the grid (sized for t = 0) is idle beyond row n-1-t and column n-t; counted block
    by block that idle region makes most blocks boundary blocks (too many classes for the fast
    count), so there each column of blocks is folded into its first block: block (bx, 0) runs
    the blocks (bx, by) one after the other (a loop over by); every warp's accesses are the same.
    """
    t = tokens(launch.shape)
    n, step = int(t["n"]), int(t["t"])
    bx, by = launch.block[0], launch.block[1]
    rows = -(-(n - step) // by)  # block rows that have work
    fold = rows < launch.grid[1]

    def col(c: Coords):
        return (c.loop * by + c.thread_y) if fold else c.y

    def inside(c: Coords):
        live = (c.x < n - 1 - step) & (col(c) < n - step)
        return live & (c.block_y == 0) if fold else live

    def first(c: Coords):
        return inside(c) & (c.y == 0)

    def aij(c: Coords):
        return n * (c.x + 1 + step) + col(c) + step

    def mi(c: Coords):
        return n * (c.x + 1 + step) + step

    def bi(c: Coords):
        return c.x + 1 + step

    loop = rows if fold else 1
    return Description(accesses=(
        Access(array="a", index=aij, guard=inside, loop=loop),
        Access(array="m", index=mi, guard=inside, loop=loop),
        Access(array="a", index=lambda c: n * step + col(c) + step, guard=inside, loop=loop),
        Access(array="a", index=aij, guard=inside, loop=loop, kind="store"),
        # the store to a may alias m and b: m is read again for the b update
        Access(array="m", index=mi, guard=first),
        Access(array="b", index=lambda c: 0 * c.x + step, guard=first),
        Access(array="b", index=bi, guard=first),
        Access(array="b", index=bi, guard=first, kind="store"),
    ))


KERNELS["gaussian.Fan1"] = _fan1
KERNELS["gaussian.Fan2.4"] = _fan2
KERNELS["gaussian.Fan2.16"] = _fan2


# ----------------------------------------------------------------------------- hotspot, pathfinder


def _overlaps(lo, hi, a, b):
    """Whether the integer ranges [lo, hi] and [a, b] share a value (elementwise)."""
    return np.maximum(lo, a) <= np.minimum(hi, b)


def _pyramid_axis(n: int, b: int, p: int, blocks: int, span: int):
    """One axis of a pyramid kernel: for each block along it (window start (b - 2p) k - p) and
    each group of ``span`` consecutive thread indices along it, whether the group holds an
    on-grid thread (blocks x groups), and for each step i < p whether it holds one that
    computes: inside [i + 1, b - i - 2] and on the grid (p x blocks x groups)."""
    start = (b - 2 * p) * np.arange(blocks)[:, None] - p
    lo = np.arange(0, b, span)[None, :]
    hi = lo + span - 1
    vmin, vmax = np.maximum(0, -start), np.minimum(b - 1, n - 1 - start)
    loaded = _overlaps(lo, hi, vmin, vmax)
    steps = np.stack([_overlaps(lo, hi, np.maximum(vmin, i + 1), np.minimum(vmax, b - i - 2))
                      for i in range(p)])
    return loaded, steps


def _pyramid_counts(loaded: float, computing: list[float], input_stores: int, step_loads: int) -> dict[str, float]:
    """Counts of a pyramid kernel, every shared access conflict-free (1 wavefront per warp
    instruction: a warp's lanes read consecutive words, or the clamped edge's word again).
    ``loaded`` warps store their input (``input_stores`` STS each); the ``computing[i]`` warps of
    step i read ``step_loads`` words and store their result; before every step but the last
    they copy it back (1 load, 1 store), after the last they read it once more for the global
    store. Barriers: 1 after the input, then 2 a step but 1 on the last (it breaks out): 2p."""
    p = len(computing)
    wavefronts = loaded * input_stores + sum(computing) * (step_loads + 1) + 2 * sum(computing[:-1]) + computing[-1]
    return {"shared_wavefronts": float(wavefronts), "barriers_per_block": float(2 * p)}


def _hotspot(launch) -> Description:
    """Pyramid stencil: block (bx, by) loads a B x B window of temp and power starting at
    (small * by - p, small * bx - p), small = B - 2p, clipped to the grid (blocks overlap by 2p);
    after p steps in shared memory the threads p away from the window's edges write temp_dst."""
    rows, cols = (int(v) for v in launch.shape.split()[0].split("x"))
    b = launch.block[0]
    p = int(tokens(launch.shape)["pyramid"])
    small = b - 2 * p

    def y(c: Coords):
        return c.block_y * small - p + c.thread_y

    def x(c: Coords):
        return c.block_x * small - p + c.thread_x

    def on_grid(c: Coords):
        return (y(c) >= 0) & (y(c) < rows) & (x(c) >= 0) & (x(c) < cols)

    def inner(c: Coords):  # computed on the last step: p from the window's edges, and on the grid
        return (on_grid(c) & (c.thread_x >= p) & (c.thread_x < b - p)
                & (c.thread_y >= p) & (c.thread_y < b - p))

    def index(c: Coords):
        return y(c) * cols + x(c)

    # shared: a warp is 32 / b whole rows of the b x b block; its lanes are on the grid (or
    # compute) when one of its rows and one of the block's columns are, so the warp counts are
    # products of a row and a column count. Input: temp and power (2 STS); a step reads the
    # centre, power and the 4 neighbours (6 LDS; the centre once, kept in a register).
    rows_per_warp = 32 // b
    ry_loaded, ry_steps = _pyramid_axis(rows, b, p, launch.grid[1], rows_per_warp)
    cx_loaded, cx_steps = _pyramid_axis(cols, b, p, launch.grid[0], b)
    loaded = ry_loaded.sum() * cx_loaded.sum()
    computing = [float(ry_steps[i].sum() * cx_steps[i].sum()) for i in range(p)]
    return Description(accesses=(
        Access(array="temp_src", index=index, guard=on_grid),
        Access(array="power", index=index, guard=on_grid),
        Access(array="temp_dst", index=index, guard=inner, kind="store"),
    ), counts=_pyramid_counts(float(loaded), computing, 2, 6))


KERNELS["hotspot.calculate_temp.8"] = _hotspot
KERNELS["hotspot.calculate_temp.16"] = _hotspot
KERNELS["hotspot.calculate_temp.32"] = _hotspot


def _dynproc(launch) -> Description:
    """Pyramid over rows: block bx covers columns small * bx - p + tx (small = 256 - 2p, blocks
    overlap by 2p), reads src there, then in step i reads wall row i where 0 <= x < cols and
    i < tx < 255 - i; the threads p away from the edges write the result."""
    t = tokens(launch.shape)
    cols, p = int(t["cols"]), int(t["pyramid"])
    b = launch.block[0]
    small = b - 2 * p

    def x(c: Coords):
        return c.block_x * small - p + c.thread_x

    def on_grid(c: Coords):
        return (x(c) >= 0) & (x(c) < cols)

    def step(c: Coords):
        return on_grid(c) & (c.thread_x > c.loop) & (c.thread_x < b - 1 - c.loop)

    def inner(c: Coords):
        return on_grid(c) & (c.thread_x >= p) & (c.thread_x < b - p)

    # shared: the warps with an on-grid lane store src (1 STS); a step reads the left, centre
    # and right words (3 LDS)
    loaded, steps = _pyramid_axis(cols, b, p, launch.grid[0], 32)
    counts = _pyramid_counts(float(loaded.sum()), [float(steps[i].sum()) for i in range(p)], 1, 3)
    return Description(counts=counts, accesses=(
        Access(array="src", index=x, guard=on_grid),
        Access(array="wall", index=lambda c: c.loop * cols + x(c), guard=step, loop=p),
        Access(array="results", index=x, guard=inner, kind="store"),
    ))


KERNELS["pathfinder.dynproc_kernel"] = _dynproc


# ----------------------------------------------------------------------------- bfs


def _sample(among: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """A random p-th of the True entries of `among` (exactly round(p * count) of them): the
    stand-in for a random input mask of density p, its density exact over the block."""
    where = np.flatnonzero(among)
    out = np.zeros(among.shape, dtype=bool)
    out[rng.choice(where, size=round(p * where.size), replace=False)] = True
    return out


def _node(c: Coords):
    """The node a bfs thread handles: its global index."""
    return c.x


def _nodes(n: int):
    """Threads that have a node (``tid < no_of_nodes``)."""
    return lambda c: c.x < n


def _bfs_kernel(launch) -> Description:
    """BFS expand: thread tid of the frontier clears its mask bit, reads its node (first edge,
    edge count), then per edge reads the neighbour id and its visited flag; for an unvisited
    neighbour it reads cost[tid], writes the neighbour's cost and updating flag, and reads its
    node again (the stores may alias it).

    Stand-in for the data-dependent part (the corpus input: node i's ``degree`` edges are
    stored from i * degree; the frontier and the visited flags are random halves of the nodes;
    edge targets are uniformly random): the frontier is a fixed random half of a block's
    threads and, per edge, the unvisited neighbours a random half of those (exact counts,
    random places, the same in every block); a neighbour is the block's first node plus a fixed
    uniform offset in [0, nodes), so a warp's gathers scatter and collide as random ids do.
    The gathered arrays' compulsory footprint then spans up to twice the nodes (overestimated).
    """
    t = tokens(launch.shape)
    n, deg = int(t["nodes"]), int(t["degree"])
    threads = launch.block[0]
    rng = np.random.default_rng(0)
    frontier = _sample(np.ones(threads, dtype=bool), 0.5, rng)
    unvisited = np.stack([_sample(frontier, 0.5, rng) for _ in range(deg)], axis=1)
    offset = rng.integers(0, n, (threads, deg))

    live = _nodes(n)

    def active(c: Coords):
        return live(c) & frontier[c.thread_x]

    def edge(e: int) -> tuple[Access, ...]:
        """The accesses of edge e (the neighbours' offsets change at random from edge to edge,
        so each edge is its own set of accesses rather than a loop)."""
        def update(c: Coords):
            return active(c) & unvisited[c.thread_x, e]

        def neighbour(c: Coords):
            return c.block_x * threads + offset[c.thread_x, e]

        return (
            Access(array="edges", index=lambda c: c.x * deg + e, guard=active),
            Access(array="visited", index=neighbour, guard=active, element_bytes=1),
            Access(array="cost", index=_node, guard=update),
            Access(array="cost", index=neighbour, guard=update, kind="store"),
            Access(array="updating", index=neighbour, guard=update, element_bytes=1, kind="store"),
            Access(array="nodes", index=lambda c: 2 * c.x + 1, guard=update),
            Access(array="nodes", index=lambda c: 2 * c.x, guard=update),
        )

    return Description(accesses=(
        Access(array="mask", index=_node, guard=live, element_bytes=1),
        Access(array="mask", index=_node, guard=active, element_bytes=1, kind="store"),
        Access(array="nodes", index=lambda c: 2 * c.x + 1, guard=active),
        Access(array="nodes", index=lambda c: 2 * c.x, guard=active),
    ) + sum((edge(e) for e in range(deg)), ()))


def _bfs_kernel2(launch) -> Description:
    """BFS commit: thread tid reads its updating flag; where set it sets mask and visited,
    clears updating and sets the one-byte over flag.

    Stand-in for the data (the corpus input sets 30% of the updating flags at random): a
    fixed random 30% of the threads (exact count, random places), the same in every block.
    """
    n = int(tokens(launch.shape)["nodes"])
    threads = launch.block[0]
    updated = _sample(np.ones(threads, dtype=bool), 0.3, np.random.default_rng(0))

    live = _nodes(n)

    def set_(c: Coords):
        return live(c) & updated[c.thread_x]

    return Description(accesses=(
        Access(array="updating", index=_node, guard=live, element_bytes=1),
        Access(array="mask", index=_node, guard=set_, element_bytes=1, kind="store"),
        Access(array="visited", index=_node, guard=set_, element_bytes=1, kind="store"),
        Access(array="over", index=lambda c: 0 * c.x, guard=set_, element_bytes=1, kind="store"),
        Access(array="updating", index=_node, guard=set_, element_bytes=1, kind="store"),
    ))


KERNELS["bfs.Kernel"] = _bfs_kernel
KERNELS["bfs.Kernel2"] = _bfs_kernel2
