"""The summary of a function's instructions (`summarize`), of every function of a cubin
(`sass_summaries`, through nvdisasm) and of a listing you already have (`read_sass`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import re
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import get_args

from .._arch import architecture as known_architecture
from .._errors import OccupancyError
from .._nvdisasm import Disassembly, Instruction, NvdisasmError, disassemble, parse_listing
from ._dataflow import (
    address_sources,
    inside_loops,
    instructions_between,
    one_address_atomic_type,
    one_address_counts,
)
from ._loads import (
    count_instructions,
    executable,
    fewest_in_flight,
    in_flight,
    load_bytes,
    loop_ranges,
    setmaxnreg_counts,
    short_name,
    thread_components,
    total_load_bytes,
)
from ._operand_table import GLOBAL_ATOMICS, GLOBAL_LOADS, operand_table
from ._paths import longest_path, warm_path
from ._summary import AddressSource, SassLoop, SassSummary

__all__ = ["Summaries", "read_sass", "sass_summaries", "summarize"]


_SOURCE_ORDER: tuple[str, ...] = get_args(AddressSource)


def summarize(instrs: Sequence[Instruction], labels: dict[str, int], architecture: str, tool: str,
              texts: dict | None = None) -> SassSummary:
    """The `SassSummary` of one function's instructions (``labels``: label -> offset; ``texts``:
    what the instruction texts of the listing read so far name, shared by its functions)."""
    sm = int(re.sub(r"\D", "", architecture) or 0)
    code = warm_path(executable(instrs, labels), labels)
    ranges = loop_ranges(code, labels)
    table = operand_table(code, sm, texts)
    addresses, index_trips, skips = address_sources(code, ranges, sm, table)
    one_address = one_address_counts(code, addresses)
    loops, bodies, peaks = [], [], []
    offsets = [i.offset for i in code]
    for start, end in ranges:
        body = instructions_between(code, offsets, start, end)
        depth = 1 + sum(1 for s, e in ranges if (s, e) != (start, end) and s <= start and end <= e)
        bodies.append(body)
        peaks.append(in_flight(body, table, passes=2))
        follows, per_index = index_trips.get(start, (None, None))
        inner = [(s, e) for s, e in ranges if (s, e) != (start, end) and start <= s and e <= end]
        own = [i for i, nested in zip(body, inside_loops(body, inner)) if not nested]
        loops.append(SassLoop(start_offset=start, end_offset=end, depth=depth, instructions=count_instructions(body),
                              global_loads_in_flight=len(peaks[-1]),
                              fewest_loads_in_flight=fewest_in_flight(own, table),
                              index_trips=follows, trips_per_index=per_index))
    hot = None
    if loops:
        def key(i: int) -> tuple[int, ...]:
            loop = loops[i]
            return (loop.instructions.global_loads > 0, loop.depth, loop.instructions.global_loads,
                    loop.instructions.total, -i)
        hot = max(range(len(loops)), key=key)
    if hot is not None and loops[hot].instructions.global_loads:
        peak = peaks[hot]
    else:
        peak = in_flight(code, table, passes=1)
    widest = max(peak, key=load_bytes, default=None)
    lone = None
    if hot is not None:
        # an exit before the hot loop, or a branch over it, that every thread but one takes
        first, last = loops[hot].start_offset, loops[hot].end_offset
        lone = next((kind for offset, (target, kind) in sorted(skips.items()) if offset < first
                     and (target is None or labels.get(target, -1) > last)), None)
    hot_sources = tuple(tuple(c for c in _SOURCE_ORDER if c in addresses.get(i.offset, ()))
                        for i in (bodies[hot] if hot is not None else ()) if i.base in GLOBAL_LOADS)
    return SassSummary(
        architecture=architecture,
        disassembler=tool,
        instructions=count_instructions(code),
        loops=tuple(loops),
        hot_loop=hot,
        global_loads_in_flight_per_thread=len(peak),
        global_load_bytes=load_bytes(widest) if widest else None,
        global_load_bytes_in_flight_per_thread=total_load_bytes(peak),
        global_load_instruction=short_name(widest) if widest else None,
        setmaxnreg_registers=setmaxnreg_counts(code),
        thread_index_components=thread_components(code),
        global_atomics=sum(1 for i in code if i.base in GLOBAL_ATOMICS),
        global_atomics_one_address=one_address[0],
        global_atomics_one_address_type=one_address_atomic_type(code, addresses),
        global_stores_one_address=one_address[1],
        hot_loop_load_sources=hot_sources,
        lone_thread=lone,
        longest_path_instructions=longest_path(code, labels, ranges),
    )


def _summarize_all(functions: dict[str, Sequence[Instruction]], labels: dict[str, dict[str, int]],
                   architecture: str, tool: str) -> dict[str, SassSummary]:
    """`summarize` of each function of a listing (``labels``: function -> label -> offset).

    Template instances often compile to the same instructions (a sort for float keys and for
    int keys): a function whose instructions are another's, up to the names of their labels,
    has that one's summary, which reads labels only for the offsets they stand for.
    """
    texts: dict = {}  # what each instruction text names, read once for all the functions
    lengths = Counter(len(instrs) for instrs in functions.values())
    made: dict[tuple, SassSummary] = {}
    out = {}
    for name, instrs in functions.items():
        own = labels.get(name, {})
        # only a function as long as another can be a copy of it
        shape = _shape(instrs, own) if lengths[len(instrs)] > 1 else None
        summary = made.get(shape) if shape is not None else None
        if summary is None:
            summary = summarize(instrs, own, architecture, tool, texts)
            if shape is not None:
                made[shape] = summary
        out[name] = summary
    return out


def _shape(instrs: Sequence[Instruction], labels: dict[str, int]) -> tuple:
    """What `summarize` reads of a function's instructions: each one with the label it names
    replaced by the offset the label stands for (None for a label not in ``labels``)."""
    return tuple((i.offset, i.guard, i.opcode, i.operands) if i.target is None else
                 (i.offset, i.guard, i.opcode, tuple("`()" if "`(" in o else o for o in i.operands),
                  labels.get(i.target))
                 for i in instrs)


@dataclass(frozen=True)
class Summaries:
    """The summary of every function of one cubin, or why there is none."""

    functions: dict[str, SassSummary]
    tool: str | None
    reason: str | None


# How many calls hold the cycle collector paused, and whether it ran before the first of them
# (`_collector_paused`; the threads of `kernel_resources_by_architecture` summarise at once).
_PAUSE_LOCK = threading.Lock()
_PAUSE: dict[str, int | bool] = {"holders": 0, "was_enabled": False}


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cycle collector paused for the length of a listing's summaries.

    A listing of a large cubin is a few hundred thousand objects (its instructions, what each
    instruction text names) that live until the summaries are made, and the summaries' walks
    allocate sets by the hundred thousand: each full collection on the way walks them all (a
    fifth of the parse and summaries of a CUB-heavy cubin) and finds nothing to free, as the
    reader makes no reference cycle. Reference counting frees as before.
    """
    with _PAUSE_LOCK:
        if not _PAUSE["holders"]:
            _PAUSE["was_enabled"] = gc.isenabled()
            gc.disable()
        _PAUSE["holders"] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _PAUSE["holders"] -= 1
            if not _PAUSE["holders"] and _PAUSE["was_enabled"]:
                gc.enable()


@functools.lru_cache(maxsize=64)
def sass_summaries(cubin: bytes, architecture: str) -> Summaries:
    """Disassemble ``cubin`` once and summarise each of its functions.

    No nvdisasm, or none that reads the cubin, gives no summaries and the reason.
    """
    with _collector_paused():
        try:
            listing: Disassembly = disassemble(cubin)
        except NvdisasmError as exc:
            return Summaries({}, None, str(exc))
        functions = _summarize_all(listing.functions, listing.labels, architecture, listing.tool)
        tool = listing.tool
        del listing  # freed while paused: the first collection after it has it no more to walk
    return Summaries(functions, tool, None)


_CODE_FOR = re.compile(r"\bcode for (sm_\d+[a-z]?)|EF_CUDA_(SM\d+[A-Z]?)\b")


def read_sass(listing: str, architecture: str | None = None, *, tool: str = "SASS listing") -> dict[str, SassSummary]:
    """The `SassSummary` of every function of a SASS listing you already have.

    The same reader as `kernel_resources` (which runs nvdisasm on a cubin itself), for a
    listing made elsewhere: ``cuobjdump -sass APP`` (an executable, library, fatbin or
    cubin), ``nvdisasm -c`` of a cubin, or the instructions of Nsight Compute's source page
    written out in either form (offsets from the function's start, ``/*0130*/``).

    Parameters
    ----------
    listing : str
        The listing's text: ``Function : NAME`` (cuobjdump) or ``.section .text.NAME``
        (nvdisasm) before each function's instructions.
    architecture : str, optional
        The SASS architecture (``"sm_90"``); default the listing's ``code for sm_XX``.
    tool : str
        What made the listing, kept in ``SassSummary.disassembler``.

    Returns
    -------
    dict
        Function name (as the listing prints it, mangled for C++) to its summary.

    Raises
    ------
    OccupancyError
        For a listing with no function, an unknown architecture, or none given and none in
        the listing.

    Examples
    --------
    >>> import occupancy
    >>> listing = '''
    ...     Function : copy
    ...     /*0000*/  LDG.E R2, desc[UR4][R2.64] ;
    ...     /*0010*/  STG.E desc[UR4][R4.64], R2 ;
    ...     /*0020*/  @!P0 BRA 0x0 ;
    ...     /*0030*/  EXIT ;
    ... '''
    >>> s = occupancy.read_sass(listing, "sm_90")["copy"]
    >>> s.instructions.global_loads, len(s.loops), s.global_loads_in_flight_per_thread
    (1, 1, 1)
    """
    if not isinstance(listing, str):
        raise TypeError(f"listing must be a str (the text of a SASS listing), not {type(listing).__name__}")
    if architecture is None:
        found = _CODE_FOR.search(listing)
        if found is None:
            raise OccupancyError("architecture=None and the listing names none (no 'code for sm_XX'): "
                                 "give architecture='sm_90', say")
        architecture = found[1] or found[2].lower()
    architecture = known_architecture(architecture).name  # a known architecture, or the package's error
    if not isinstance(tool, str):
        raise TypeError(f"tool must be a str, not {type(tool).__name__}")
    with _collector_paused():
        parsed = parse_listing(listing, tool)
        out = _summarize_all({name: instrs for name, instrs in parsed.functions.items() if instrs}, parsed.labels,
                             architecture, tool)
        del parsed  # freed while paused: the first collection after it has it no more to walk
    if not out:
        raise OccupancyError(f"the {tool} holds no function with instructions ('Function : NAME' or "
                             "'.section .text.NAME' followed by /*offset*/ lines)")
    return out
