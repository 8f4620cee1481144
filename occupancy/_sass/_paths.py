"""The longest path through a function's code outside its loops: what a warp that takes one side
of each branch issues there at most (`SassSummary.longest_path_instructions`)."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from .._nvdisasm import Instruction
from ._operand_table import CLASSES

__all__ = ["longest_path"]

#: The instructions that end a thread's path where no guard holds them.
_ENDS = ("EXIT", "RET")
#: Jumps through a register (a ``switch``'s jump table): the listing does not name their targets.
_INDIRECT = ("BRX", "BRXU", "JMX", "JMXU")


def longest_path(code: Sequence[Instruction], labels: dict[str, int],
                 loops: Sequence[tuple[int, int]]) -> int | None:
    """Instructions on the longest path from the function's first instruction to an exit,
    counting those outside every loop: a loop is a step of none from its first instruction to
    the one after its last (its trips are counted apart).

    A branch with a guard goes on or jumps; one without jumps; an ``EXIT`` or ``RET`` without
    a guard ends the path; a ``CALL`` adds its callee's longest path to its ``RET`` (a
    ``__noinline__`` function, a division's slow path: listed after the caller's exit). Outside
    the loops every branch jumps forward (a branch back makes a loop), so one pass from the last
    instruction to the first gives each instruction's longest path to an exit. None where the
    code jumps through a register (``BRX``: a jump table, whose targets the listing does not
    name).

    Parameters
    ----------
    code : sequence of Instruction
        The instructions that run (`executable`), in address order.
    labels : dict
        Label -> offset.
    loops : sequence of (int, int)
        (first, last offset) of every loop (`loop_ranges`).

    Returns
    -------
    int or None
        Instructions on that path; every instruction outside the loops where branches
        join nothing (straight code). None with a jump through a register.
    """
    if any(instr.base in _INDIRECT for instr in code):
        return None
    offsets = [instr.offset for instr in code]
    n = len(code)

    def at(offset: int) -> int:
        """The index of the first instruction at or after `offset` (n: past the end)."""
        return bisect.bisect_left(offsets, offset)

    # an instruction inside a loop stands for the whole loop: on to the first one after it
    after = list(range(n))
    for start, end in loops:
        past = at(end + 1)
        for i in range(at(start), past):
            after[i] = max(after[i], past)  # an outer loop's end is past an inner one's
    best = [0] * (n + 1)
    for i in range(n - 1, -1, -1):
        if after[i] != i:
            best[i] = best[after[i]]
            continue
        instr = code[i]
        nexts, weight = [i + 1], 1
        if instr.base == "CALL" and instr.target in labels:
            callee = at(labels[instr.target])
            weight += best[callee] if i < callee < n else 0  # a callee listed before its caller: not followed
        elif instr.base in _ENDS and instr.guard is None:
            nexts = []
        elif CLASSES.get(instr.base) == "branches" and instr.target is not None and instr.target in labels:
            target = at(labels[instr.target])
            jump = after[target] if target < n else n
            nexts = [jump] if instr.guard is None else [i + 1, jump]
        best[i] = weight + max((best[j] for j in nexts if j > i), default=0)
    return best[0] if n else 0
