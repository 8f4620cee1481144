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


def longest_path(code: Sequence[Instruction], labels: dict[str, int], loops: Sequence[tuple[int, int]]) -> int:
    """Instructions on the longest path from the function's first instruction to an exit,
    counting those outside every loop: a loop is a step of none from its first instruction to
    the one after its last (its trips are counted apart).

    A branch with a guard goes on or jumps; one without jumps; an ``EXIT`` or ``RET`` without
    a guard ends the path. Outside the loops every branch jumps forward (a branch back makes
    a loop), so one pass from the last instruction to the first gives each instruction's
    longest path to an exit.

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
    int
        Instructions on that path; every instruction outside the loops where branches
        join nothing (straight code).
    """
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
        nexts = [i + 1]
        if instr.base in _ENDS and instr.guard is None:
            nexts = []
        elif CLASSES.get(instr.base) == "branches" and instr.target is not None and instr.target in labels:
            target = at(labels[instr.target])
            jump = after[target] if target < n else n
            nexts = [jump] if instr.guard is None else [i + 1, jump]
        best[i] = 1 + max((best[j] for j in nexts if j > i), default=0)
    return best[0] if n else 0
