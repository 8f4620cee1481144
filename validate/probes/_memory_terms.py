"""Probes of the memory-side terms of the time model, one parameter each.

`validate/kernels/memory_terms.cu` holds the kernels; each measures one parameter of
`roofline.predict`, never a kernel family or corpus kernel the model is checked on:

* **L2 requests**: one float per 128-byte line of an L2-resident buffer (a warp load is 32
  one-sector requests), against the same buffer read whole as float4 (full lines): the
  requests per second L2 serves when bytes do not bind, and the sectors per second it
  serves when they do (the ``l2_requests`` and ``l2`` terms).
* **Atomics on one address**: lane 0 of every warp adds to one counter (a warp-aggregated
  atomic): the updates per second one address takes, in series at its L2 slice.
* **Atomics spread**: every lane adds to a word of its own line of an L2-resident buffer:
  the updates per second L2's atomic units take when no address is shared.
* **Stores to one address**: a thread per element of 16 MiB copies it and sets one flag, after
  validate's L2 flush, against the same copy without the flag: the warp stores per second one
  address takes, in series at its L2 slice (the time the flag adds). Each warp sets it when its
  own load returns, as a kernel's flag is set; warps that store together (no load before)
  reach about seven times this rate, their stores merged on the way.
* **Random bursts**: half-warps read 64-byte bursts at hashed places of a buffer far past
  L2: the DRAM-equivalent bytes of one burst (its time x the read bandwidth / bursts).
* **The flush's written lines**: a read stream of 4x L2 timed after validate's L2 flush (a
  memset, which leaves L2 full of written lines) and after a clean scrub (the same stream over
  another buffer): the difference is the write-back of the lines the stream displaces, in
  bytes at the DRAM's cost of a written byte (a copy stream's rate against the read's). The
  same at a quarter of L2 is reported beside what the model makes of it.

Each launch takes tens to hundreds of microseconds; the probe takes a few seconds.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..device import DeviceInfo, Session, StopRules, benchmark, compile_kernels, kernel_source, takes_session
from ._probe import Figures, Probe, RunContext

__all__ = [
    "MemoryTermTimes",
    "MemoryTerms",
    "MemoryTermsProbe",
    "derive_memory_terms",
    "flush_dirty_bytes",
    "measure_memory_terms",
    "memory_terms_calibration",
    "one_address_store_rate",
    "render_memory_terms",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")
LINE_BYTES, SECTOR_BYTES, BURST_BYTES = 128, 32, 64


class MemoryTermTimes(BaseModel):
    """What the L2, atomic and random-burst probes timed (seconds per launch) with the work each
    launch did: the measured input of `derive_memory_terms`."""

    model_config = _FROZEN

    lone_sector_seconds: float = Field(gt=0)
    lone_sector_requests: int = Field(gt=0, description="One-sector L2 requests of one launch.")
    full_line_seconds: float = Field(gt=0)
    full_line_sectors: int = Field(gt=0, description="Sectors one full-line launch reads.")
    one_address_seconds: float = Field(gt=0)
    one_address_updates: int = Field(gt=0)
    spread_seconds: float = Field(gt=0)
    spread_updates: int = Field(gt=0)
    random_burst_seconds: float = Field(gt=0)
    random_bursts: int = Field(gt=0)


class MemoryTerms(MemoryTermTimes):
    """What the probes timed (`MemoryTermTimes`, and the stores to one address and the flush's
    streams) and the parameters derived from them (`derive_memory_terms`)."""

    one_address_store_seconds: float | None = Field(default=None, gt=0, description="The copy that sets a flag.")
    spread_store_seconds: float | None = Field(default=None, gt=0, description="The same copy without the flag.")
    store_warps: int | None = Field(default=None, gt=0, description="Warps of one copy (each sets the flag once).")
    one_address_stores_per_second: float | None = Field(
        default=None, gt=0, description="The store warps over the time the shared word adds (None: it added none).")
    read_bytes_per_second: float = Field(gt=0, description="DRAM read bandwidth the bursts are converted at.")
    l2_requests_per_second: float
    l2_sectors_per_second: float
    atomic_one_address_updates_per_second: float
    atomic_spread_updates_per_second: float
    dram_random_burst_bytes: float
    # the flush's written lines (None: a report written without this probe)
    flush_read_bytes: int | None = Field(default=None, description="Bytes the large read stream read (4x L2).")
    flush_dirty_seconds: float | None = Field(default=None, description="The stream after the L2 flush.")
    flush_clean_seconds: float | None = Field(default=None, description="The stream after a clean scrub.")
    flush_copy_seconds: float | None = Field(default=None, description="A copy of the same bytes, after a clean scrub.")
    flush_small_read_bytes: int | None = Field(default=None, description="The small stream's bytes (L2 / 4).")
    flush_small_dirty_seconds: float | None = None
    flush_small_clean_seconds: float | None = None
    flush_dirty_bytes: float | None = Field(
        default=None, description="Written bytes L2 holds after the flush: the large stream's extra time over the "
                                  "DRAM's cost of a written byte.")


def flush_dirty_bytes(*, read_bytes: float, dirty_seconds: float, clean_seconds: float, copy_seconds: float,
                      l2_bytes: float) -> float:
    """The written bytes validate's L2 flush leaves in L2, from one read stream's two times.

    A read of ``read_bytes`` after a clean scrub takes ``clean_seconds`` (rate ``r``); a copy of
    the same bytes reads and writes them in ``copy_seconds`` (a half-and-half mix at ``c =
    2 x read_bytes / copy_seconds``); a written byte in a read stream then costs ``2/c - 1/r``
    seconds (`roofline.terms.mixed_dram_bandwidth`'s rule). The stream after the flush takes longer
    by the write-back of the flush's lines it displaces: their bytes are the extra time over
    that cost, between 0 and ``l2_bytes``.
    """
    read = read_bytes / clean_seconds
    copy = 2.0 * read_bytes / copy_seconds
    per_written_byte = 2.0 / copy - 1.0 / read
    if per_written_byte <= 0:
        per_written_byte = 1.0 / read  # a copy no slower than a read: a written byte at the read's cost
    return min(float(l2_bytes), max(0.0, (dirty_seconds - clean_seconds) / per_written_byte))


def one_address_store_rate(*, warps: int, one_address_seconds: float, spread_seconds: float) -> float | None:
    """Warp stores per second to one address: the warps over the time the flag adds to the same
    copy without it (None when it adds none: no queue seen)."""
    extra = one_address_seconds - spread_seconds
    return warps / extra if extra > 0 else None


def derive_memory_terms(times: MemoryTermTimes, *, read_bytes_per_second: float) -> MemoryTerms:
    """The parameters from the probes' times (a plain function, tested on the CPU).

    Rates are the work over the time. A random burst costs its time at the read bandwidth
    (bytes/s) over the bursts read, and at least the 64 bytes it moves (a probe cannot show a
    burst cheaper than a stream's).
    """
    if not isinstance(times, MemoryTermTimes):
        raise TypeError(f"times must be a MemoryTermTimes, not {type(times).__name__}")
    t = times
    burst = max(float(BURST_BYTES), t.random_burst_seconds * read_bytes_per_second / t.random_bursts)
    return MemoryTerms(
        **t.model_dump(include=set(MemoryTermTimes.model_fields)), read_bytes_per_second=read_bytes_per_second,
        l2_requests_per_second=t.lone_sector_requests / t.lone_sector_seconds,
        l2_sectors_per_second=t.full_line_sectors / t.full_line_seconds,
        atomic_one_address_updates_per_second=t.one_address_updates / t.one_address_seconds,
        atomic_spread_updates_per_second=t.spread_updates / t.spread_seconds,
        dram_random_burst_bytes=burst,
    )


@takes_session
def measure_memory_terms(session: Session, info: DeviceInfo, *, read_bytes_per_second: float, quick: bool = False,
                         progress: Callable[[str], None] = lambda message: None) -> MemoryTerms:
    """Run the probes on the device.

    Parameters
    ----------
    session : validate.Session
    info : DeviceInfo
    read_bytes_per_second : float
        A read stream's DRAM bandwidth measured in the same run (the working-set sweep's plateau).
    quick : bool
        Fewer passes and a 256 MiB burst buffer instead of 1 GiB.
    """
    bench = _TermBench(session, info, quick)
    l2 = bench.l2_requests()
    atomics = bench.atomics()
    stores = bench.one_address_stores()
    bursts = bench.random_bursts()
    flush = bench.flush_streams()
    session.synchronize()
    bench.buffers.clear()
    terms = derive_memory_terms(MemoryTermTimes(**l2, **atomics, **bursts), read_bytes_per_second=read_bytes_per_second)
    terms = terms.model_copy(update={**flush, **stores})
    progress(f"memory terms: L2 {terms.l2_requests_per_second / 1e9:.0f} G one-sector requests/s, "
             f"{terms.l2_sectors_per_second / 1e9:.0f} G sectors/s; atomics {terms.atomic_spread_updates_per_second / 1e9:.1f} "
             f"G/s spread, {terms.atomic_one_address_updates_per_second / 1e9:.2f} G/s on one address; stores to one "
             f"address {(terms.one_address_stores_per_second or 0) / 1e9:.2f} G/s; random burst "
             f"{terms.dram_random_burst_bytes:.0f} B; the L2 flush leaves {terms.flush_dirty_bytes / 1e6:.1f} MB "
             f"written")
    return terms


class _TermBench:
    """The memory-term kernels compiled for one session, the launch they run at, and the buffers
    the probes allocate (held until every probe has run). Each probe returns the `MemoryTerms`
    fields it measures."""

    def __init__(self, session: Session, info: DeviceInfo, quick: bool) -> None:
        names = ["l2_lone_sector", "l2_full_line", "atomic_one_address", "atomic_spread", "store_flag",
                 "store_no_flag", "random_burst", "stream_read", "stream_copy"]
        self.kernels = compile_kernels(kernel_source("memory_terms.cu"), names, arch=session.arch,
                                       name="memory_terms.cu")
        self.session, self.info, self.quick = session, info, quick
        self.threads = 256
        self.grid = info.sm_count * max(1, info.max_threads_per_sm // self.threads)
        self.buffers: list[object] = []
        self.sink = self.allocate(4096, poison=False)
        # L2: a quarter of it, so that every pass after the warm-up hits
        self.l2_bytes = max(LINE_BYTES * 1024, info.l2_cache_bytes // 4)
        self.lines = self.l2_bytes // LINE_BYTES

    def allocate(self, nbytes: int, *, poison: bool = True) -> object:
        buffer = self.session.allocate(nbytes)
        self.buffers.append(buffer)
        if poison:
            self.session.poison(buffer, nbytes)
        return buffer

    def timed(self, kernel: str, args: tuple, *, warmup: int = 2, flush: Callable[[], object] | None = None,
              blocks: int | None = None) -> float:
        run = self.session.launcher(self.kernels[kernel], (blocks or self.grid, 1, 1), (self.threads, 1, 1), args)
        rules = StopRules(warmup=warmup, repetitions=5 if self.quick else 9)
        return benchmark(run, timer=self.session.timer, rules=rules, flush=flush).median_seconds

    def l2_requests(self) -> dict[str, float | int]:
        """One-sector requests and full lines of an L2-resident buffer."""
        resident = self.allocate(self.l2_bytes)
        passes = 16 if self.quick else 64
        lone = self.timed("l2_lone_sector", (resident, self.sink, np.uint32(self.lines), np.int32(passes)))
        full = self.timed("l2_full_line", (resident, self.sink, np.uint32(self.l2_bytes // 16), np.int32(passes // 4)))
        return dict(lone_sector_seconds=lone, lone_sector_requests=self.lines * passes, full_line_seconds=full,
                    full_line_sectors=self.l2_bytes // SECTOR_BYTES * (passes // 4))

    def atomics(self) -> dict[str, float | int]:
        """Atomics on one counter and spread over lines, in the same L2-resident buffer."""
        self.counters = self.allocate(self.l2_bytes)  # any start value: the probes only add
        iters = 8 if self.quick else 16
        warps = self.grid * self.threads // 32
        one = self.timed("atomic_one_address", (self.counters, np.int32(iters)))
        spread = self.timed("atomic_spread", (self.counters, np.uint32(self.lines), np.int32(iters)))
        return dict(one_address_seconds=one, one_address_updates=warps * iters, spread_seconds=spread,
                    spread_updates=self.grid * self.threads * iters)

    def one_address_stores(self) -> dict[str, float | int | None]:
        """A copy that sets a flag against the same copy without it: enough warps that the flag's
        queue takes tens of microseconds, timed as kernels are (after the flush)."""
        elements = (1 << 20) if self.quick else (1 << 22)
        store_blocks = elements // self.threads
        store_warps = elements // 32
        source, copied = self.allocate(elements * 4, poison=False), self.allocate(elements * 4, poison=False)
        self.session.poison(source, elements * 4)
        store_args = (source, copied, self.counters, np.uint32(elements))
        flush = self.session.flush_l2
        store_one = self.timed("store_flag", store_args, blocks=store_blocks, flush=flush)
        store_spread = self.timed("store_no_flag", store_args, blocks=store_blocks, flush=flush)
        return dict(one_address_store_seconds=store_one, spread_store_seconds=store_spread, store_warps=store_warps,
                    one_address_stores_per_second=one_address_store_rate(
                        warps=store_warps, one_address_seconds=store_one, spread_seconds=store_spread))

    def random_bursts(self) -> dict[str, float | int]:
        """64-byte bursts at hashed places of a buffer far past L2."""
        buffer_bytes = min((1 << 28) if self.quick else (1 << 30), self.info.memory_size_bytes // 4)
        bursts = buffer_bytes // BURST_BYTES
        far = self.allocate(buffer_bytes)
        random = self.timed("random_burst", (far, self.sink, np.uint32(bursts), np.uint32(bursts)))
        return dict(random_burst_seconds=random, random_bursts=bursts)

    def flush_streams(self) -> dict[str, float | int]:
        """The flush's written lines: a read stream after the flush and after a clean scrub."""
        l2_cache_bytes, threads, sink = self.info.l2_cache_bytes, self.threads, self.sink
        big = 4 * l2_cache_bytes // 16 * 16
        small = max(16 * threads, l2_cache_bytes // 4 // 16 * 16)
        stream = self.allocate(big)
        scrub = self.allocate(big)
        target = self.allocate(big, poison=False)
        clean = self.session.launcher(self.kernels["stream_read"], (self.grid, 1, 1), (threads, 1, 1),
                                      (scrub, sink, np.uint32(big // 16)))

        def stream_time(nbytes: int, flush: Callable[[], object], kernel: str = "stream_read") -> float:
            args = (stream, sink if kernel == "stream_read" else target, np.uint32(nbytes // 16))
            return self.timed(kernel, args, warmup=1, flush=flush)

        dirty_big = stream_time(big, self.session.flush_l2)
        clean_big = stream_time(big, clean)
        copy_big = stream_time(big, clean, "stream_copy")
        dirty_small = stream_time(small, self.session.flush_l2)
        clean_small = stream_time(small, clean)
        return dict(flush_read_bytes=big, flush_dirty_seconds=dirty_big, flush_clean_seconds=clean_big,
                    flush_copy_seconds=copy_big, flush_small_read_bytes=small, flush_small_dirty_seconds=dirty_small,
                    flush_small_clean_seconds=clean_small,
                    flush_dirty_bytes=flush_dirty_bytes(read_bytes=big, dirty_seconds=dirty_big,
                                                        clean_seconds=clean_big, copy_seconds=copy_big,
                                                        l2_bytes=l2_cache_bytes))


def memory_terms_calibration(terms: MemoryTerms) -> Figures:
    """The calibration entries the probes give: name -> (value, how it was measured)."""
    return {
        "l2_requests_per_second": (terms.l2_requests_per_second,
                                   f"one float per 128-byte line of an L2-resident buffer (32 one-sector requests "
                                   f"per warp load), {terms.lone_sector_requests} requests"),
        "atomic_one_address_updates_per_second": (terms.atomic_one_address_updates_per_second,
                                                  f"one warp-aggregated atomicAdd per warp to one counter, "
                                                  f"{terms.one_address_updates} updates"),
        "atomic_spread_updates_per_second": (terms.atomic_spread_updates_per_second,
                                             f"every lane adds to a word of its own line of an L2-resident "
                                             f"buffer, {terms.spread_updates} updates"),
        **({} if terms.one_address_stores_per_second is None else {"one_address_stores_per_second": (
            terms.one_address_stores_per_second,
            f"a copy of {terms.store_warps * 32} elements whose {terms.store_warps} warps each set one flag, against "
            f"the same copy without it, after validate's L2 flush: the warps over the time the flag adds")}),
        "dram_random_burst_bytes": (terms.dram_random_burst_bytes,
                                    f"64-byte bursts read at hashed places of a buffer far past L2, "
                                    f"{terms.random_bursts} bursts, time x read bandwidth / bursts"),
        **({} if terms.flush_dirty_bytes is None else {"flush_dirty_bytes": (
            terms.flush_dirty_bytes,
            f"a read stream of {terms.flush_read_bytes} bytes after validate's L2 flush (a memset of 4x L2) against "
            f"after a clean scrub, the extra time over the DRAM's cost of a written byte (a copy stream's rate "
            f"against the read's)")}),
    }


def render_memory_terms(t: MemoryTerms, h: str = "##") -> list[str]:
    """The memory-term parameters and what each was derived from."""
    return [f"{h} Memory terms (L2 requests, atomics, stores to one address, random bursts)", "",
            "| parameter | value | from |", "| --- | ---: | --- |",
            f"| L2 one-sector requests | {t.l2_requests_per_second / 1e9:.0f} G/s | {t.lone_sector_requests} "
            f"requests in {t.lone_sector_seconds * 1e6:.1f} us |",
            f"| L2 sectors, full lines | {t.l2_sectors_per_second / 1e9:.0f} G/s | {t.full_line_sectors} sectors in "
            f"{t.full_line_seconds * 1e6:.1f} us |",
            f"| atomics, one address | {t.atomic_one_address_updates_per_second / 1e9:.2f} G/s | "
            f"{t.one_address_updates} warp-aggregated updates in {t.one_address_seconds * 1e6:.1f} us |",
            f"| atomics, spread | {t.atomic_spread_updates_per_second / 1e9:.1f} G/s | {t.spread_updates} updates "
            f"in {t.spread_seconds * 1e6:.1f} us |",
            *_render_stores(t),
            f"| random 64-byte burst | {t.dram_random_burst_bytes:.0f} B | {t.random_bursts} bursts in "
            f"{t.random_burst_seconds * 1e6:.1f} us at {t.read_bytes_per_second / 1e12:.2f} TB/s |",
            *_render_flush(t), ""]


def _render_stores(t: MemoryTerms) -> list[str]:
    if t.one_address_store_seconds is None or t.spread_store_seconds is None:
        return []
    rate = "none added" if t.one_address_stores_per_second is None else \
        f"{t.one_address_stores_per_second / 1e9:.2f} G/s"
    return [f"| stores to one address | {rate} | a copy whose {t.store_warps} warps set one flag: "
            f"{t.one_address_store_seconds * 1e6:.1f} us, {t.spread_store_seconds * 1e6:.1f} us without it |"]


def _render_flush(t: MemoryTerms) -> list[str]:
    if t.flush_dirty_bytes is None or t.flush_dirty_seconds is None or t.flush_clean_seconds is None:
        return []
    rows = [f"| written lines the L2 flush leaves | {t.flush_dirty_bytes / 1e6:.1f} MB | a {t.flush_read_bytes / 1e6:.0f} "
            f"MB read stream: {t.flush_dirty_seconds * 1e6:.1f} us after the flush, {t.flush_clean_seconds * 1e6:.1f} us "
            f"after a clean scrub, copy {t.flush_copy_seconds * 1e6:.1f} us |"]
    if t.flush_small_read_bytes and t.flush_small_dirty_seconds and t.flush_small_clean_seconds:
        extra = (t.flush_small_dirty_seconds - t.flush_small_clean_seconds) * 1e6
        rows.append(f"| the same at {t.flush_small_read_bytes / 1e6:.1f} MB (reported) | {extra:+.2f} us | "
                    f"{t.flush_small_dirty_seconds * 1e6:.2f} us after the flush, "
                    f"{t.flush_small_clean_seconds * 1e6:.2f} us after a clean scrub |")
    return rows


class MemoryTermsProbe(Probe[MemoryTerms]):
    """The memory-term probes (`measure_memory_terms`), after the working-set sweep: random
    bursts are converted at its DRAM read plateau."""

    name = "memory_terms"
    step = "memory terms"
    needs = ("working_set",)

    def run(self, ctx: RunContext) -> MemoryTerms | None:
        read = ctx.figures.get("dram_read_bytes_per_second", (None, ""))[0]
        if not read:
            return None
        return measure_memory_terms(ctx.session, ctx.info, read_bytes_per_second=read, quick=ctx.quick,
                                    progress=ctx.progress)

    def figures(self, result: MemoryTerms) -> Figures:
        return memory_terms_calibration(result)

    def render(self, result: MemoryTerms | None, heading: str, assets: str) -> list[str]:
        return [] if result is None else render_memory_terms(result, heading)  # None: a report written without the probe
