"""The longest path through a function's code outside its loops: what a warp that takes one side
of each branch issues there at most (`SassSummary.longest_path_instructions`)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from .._nvdisasm import Instruction
from ._operand_table import CLASSES

__all__ = ["longest_path", "warm_path"]

#: The instructions that end a thread's path where no guard holds them.
_ENDS = ("EXIT", "RET")
#: Jumps through a register (a ``switch``'s jump table): the listing does not name their targets.
_INDIRECT = ("BRX", "BRXU", "JMX", "JMXU")
#: A branch's own predicate operand (``BRA.U !UP0, `(.L_x_2)``, ``@!P1 BRA !P2, ...``): a condition
#: as much as a guard is; ``PT`` is always true.
_PREDICATE = re.compile(r"!?U?P[0-7]|!U?PT")


def conditional(instr: Instruction) -> bool:
    """Whether a branch may fall through: a guard, or a predicate operand of its own."""
    return instr.guard is not None or bool(instr.operands and _PREDICATE.fullmatch(instr.operands[0].strip()))


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
            nexts = [i + 1, jump] if conditional(instr) else [jump]
        best[i] = weight + max((best[j] for j in nexts if j > i), default=0)
    return best[0] if n else 0


def warm_path(code: Sequence[Instruction], labels: dict[str, int]) -> list[Instruction]:
    """The instructions a warp reaches from the function's first one, leaving out the cold code
    the compiler lists after the function's exit: the fallback a ``BRA.DIV`` takes when a warp
    reaches a shuffle or vote diverged (``WARPSYNC.COLLECTIVE`` and one instruction a lane, with
    branches back into the function: read as a loop, it was a hot loop that never runs), and the
    slow paths of CUDA's math a ``CALL`` reaches (``$__internal_..._slowpath``: a division's
    denormal and special cases). A ``__noinline__`` function's ``CALL`` is followed. All of `code`
    where it jumps through a register (``BRX``: targets the listing does not name).
    """
    if any(instr.base in _INDIRECT for instr in code):
        return list(code)
    offsets = [instr.offset for instr in code]
    n = len(code)

    def at(label: str | None) -> int | None:
        return bisect.bisect_left(offsets, labels[label]) if label in labels else None

    reached: set[int] = set()
    stack = [0] if n else []
    while stack:
        i = stack.pop()
        while i < n and i not in reached:
            reached.add(i)
            instr = code[i]
            if instr.base == "CALL":
                target = at(instr.target)
                if target is not None and "slowpath" not in (instr.target or ""):
                    stack.append(target)
            elif instr.base == "BRA" and "DIV" in instr.modifiers:
                pass  # the diverged warp's fallback: cold; a converged warp goes on
            elif instr.base in _ENDS and instr.guard is None:
                break
            elif CLASSES.get(instr.base) == "branches" and (target := at(instr.target)) is not None:
                if not conditional(instr):
                    i = target
                    continue
                stack.append(target)
            i += 1
    return [code[i] for i in sorted(reached)]
