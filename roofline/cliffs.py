"""The predicted time at every occupancy cliff of a launch.

`time_cliffs` moves each resource (registers per thread, shared memory per block, threads
per block) to the values where the launch's occupancy changes (`occupancy.cliffs`) and
predicts the time at each (`roofline.predict`): a `TimeCliffs` of `TimeCliff` s.
"""

from ._cliffs import TimeCliff, TimeCliffs, time_cliffs

__all__ = ["TimeCliff", "TimeCliffs", "time_cliffs"]
