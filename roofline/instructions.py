"""The instruction roofline (Ding & Williams, PMBS 2019): warp instructions per second against
warp instructions per memory transaction, for kernels whose work is instructions, not flops.

`instruction_roofline` turns a profiled report (`roofline.ProfileReport`) into an
`InstructionRoofline`: its `InstructionCeiling` s (the issue rate and one sector rate per
memory level) and one `InstructionPoint` per kernel and level.
"""

from ._instruction_roofline import InstructionCeiling, InstructionPoint, InstructionRoofline, instruction_roofline

__all__ = ["InstructionCeiling", "InstructionPoint", "InstructionRoofline", "instruction_roofline"]
