"""The GPC layout of a GPU: what thread-block-cluster occupancy depends on.

The layouts of the packaged GPUs live in their facts files (``roofline/data/gpus/<gpu>.toml``,
section ``[gpc_layout]``); `roofline.gpc_layout` finds one by GPU name.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["GpcLayout"]


class GpcLayout(BaseModel):
    """The SMs of each GPC of one GPU, as cluster scheduling sees them.

    Examples
    --------
    >>> import occupancy
    >>> g = occupancy.GpcLayout(name="toy", compute_capability="9.0", sm_count=20, sms_per_gpc=(16, 4),
    ...                         max_blocks_per_sm_in_cluster=8, max_cluster_size=8,
    ...                         max_nonportable_cluster_size=16, measured=False, source="an example")
    >>> g.sm_count, max(g.sms_per_gpc)
    (20, 16)
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str = Field(description='The roofline database name, e.g. "H200".')
    aliases: tuple[str, ...] = Field(default=(), description="Other spellings of the name.")
    compute_capability: str = Field(description='"major.minor", e.g. "9.0".')
    sm_count: int = Field(gt=0)
    sms_per_gpc: tuple[int, ...] = Field(description="SMs of each GPC (cluster-scheduling group).")
    max_blocks_per_sm_in_cluster: int = Field(
        gt=0, description="Blocks of a cluster launch that one SM holds at most."
    )
    max_cluster_size: int = Field(gt=0, description="Largest portable cluster, blocks.")
    max_nonportable_cluster_size: int = Field(
        gt=0, description="Largest cluster with the non-portable attribute, blocks."
    )
    measured: bool = Field(description="False where the layout is an assumption.")
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> GpcLayout:
        if sum(self.sms_per_gpc) != self.sm_count or min(self.sms_per_gpc, default=0) <= 0:
            raise ValueError(
                f"GPU {self.name}: sms_per_gpc {list(self.sms_per_gpc)} must be positive and add up "
                f"to sm_count={self.sm_count}"
            )
        if self.max_nonportable_cluster_size < self.max_cluster_size:
            raise ValueError(f"GPU {self.name}: max_nonportable_cluster_size is below max_cluster_size")
        return self
