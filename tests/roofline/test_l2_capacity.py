"""A block's rereads of its own sectors that L2 lets go (`l2_capacity_rereads`), and the second
loop of a block (`Access.phase`) that L1 does not keep; expected values by hand from
docs/prediction.md 'Rows read twice: rereads L2 lets go'."""

import pytest

import roofline
from roofline.memory import Access, traffic
from roofline._predict.derive import l2_capacity_rereads

ROW = 16 * 1024  # bytes a block's row holds: 256 threads x 16 trips x 4 bytes
BLOCKS = 64


def _rows(phase, shared=False):
    """`BLOCKS` blocks of 256 threads, each reading a row of `ROW` bytes twice (`phase`: the
    second read in a loop after the first); ``shared``: every block reads the same row."""
    def at(c):
        return (0 if shared else c.block_x * (ROW // 4)) + c.thread_x + c.loop * 256

    return roofline.Kernel(name="rows", flops=0, traffic=traffic(BLOCKS, 256, [
        Access(array="x", index=at, loop=16), Access(array="x", index=at, loop=16, phase=phase)]))


@pytest.mark.parametrize(("phase", "stream"), [
    (0, ROW),       # both reads in one iteration: L1 holds the sectors from one to the other
    (1, 2 * ROW),   # the second loop starts after the first ends: its first iteration is new
], ids=["one-loop", "two-loops"])
def test_a_second_loop_follows_the_first(phase, stream):
    t = _rows(phase).traffic
    assert t.l1_footprint_bytes_per_block == ROW
    assert t.l1_stream_bytes_per_block == stream


@pytest.mark.parametrize(("shared", "resident", "l2_bytes", "rereads"), [
    # own rows: 8 resident blocks bring 8 rows between a sector's two reads
    (False, 8, 8 * ROW - 1, BLOCKS * ROW),    # one byte short of L2: every reread from DRAM
    (False, 8, 8 * ROW, 0.0),                 # they fit: L2 serves the rereads
    (False, 1000, BLOCKS * ROW - 1, BLOCKS * ROW),  # fewer blocks than slots: the grid's rows
    (False, 1000, BLOCKS * ROW, 0.0),
    # one row for all: own = ROW / (64 x ROW); the 64 resident hold one row between them
    (True, BLOCKS, ROW - 1, BLOCKS * ROW / BLOCKS),
    (True, BLOCKS, ROW, 0.0),
    (False, 8, None, 0.0),                    # no L2 size: nothing known
], ids=["own-spill", "own-fit", "sub-wave-spill", "sub-wave-fit", "shared-spill", "shared-fit", "no-l2"])
def test_rereads_miss_where_the_resident_footprints_outgrow_l2(shared, resident, l2_bytes, rereads):
    k = _rows(1, shared)
    served = 2.0 * BLOCKS * ROW  # both passes past L1, no stores
    assert l2_capacity_rereads(k, BLOCKS, resident, served, l2_bytes) == pytest.approx(rereads)


def test_disabled_rule_keeps_the_compulsory_bytes():
    """128 rows of 1 MiB read twice on an H100 (50 MB L2, 128 blocks of 1024 resident at once): the
    second read comes from DRAM, 2 x 128 MiB read; without the rule once, as the description counts."""
    rows, cols = 128, 1 << 18

    def at(c):
        return c.block_x * cols + c.thread_x + c.loop * 1024

    t = traffic(rows, 1024, [Access(array="x", index=at, loop=cols // 1024),
                             Access(array="x", index=at, loop=cols // 1024, phase=1)])
    k = roofline.counted_kernel(t.kernel(name="rows", flops=0), roofline.measured_launch(rows, 1024,
                                                                                         registers_per_thread=14))
    read = {}
    for off in (False, True):
        with roofline.terms.disabled({"l2_capacity_rereads"} if off else set()):
            p = roofline.predict("H100 SXM", k)
        read[off] = next(t for t in p.terms if t.name == "dram").inputs["dram_read_bytes"]
    assert read[True] == t.dram_load_bytes == rows * cols * 4
    assert read[False] == 2 * rows * cols * 4
