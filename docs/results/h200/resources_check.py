"""The GPU half of issue 8 part 1: offline kernel resources against the driver.

Run on the device (validate.check_resources: the corpus of validate/kernels/*.cu, resources.cu
and the occupancy probes compiled with NVRTC; the same cubin read offline and loaded in the
driver; calculate(resources=) against cuOccupancyMaxActiveBlocksPerMultiprocessor; Triton
kernels compiled on the device through the Triton adapter). Writes resources_check.json and a
summary on stdout.
    python docs/results/h200/resources_check.py OUT_DIR
"""

import json
import sys
from pathlib import Path

import validate

out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
session = validate.open_session(0)
info = validate.query_device(session)
check = validate.check_resources(session, info, progress=print)
(out / "resources_check.json").write_text(check.model_dump_json(indent=1))
print(f"device: {info.name} ({info.arch})")
print(f"kernels: {check.kernels}; fields compared: {check.fields_compared}; "
      f"field mismatches: {len(check.field_mismatches)}")
print(f"launches: {check.launches_checked} ({check.launches_beyond_bounds} over the kernel's max threads, "
      f"0 blocks on both sides); launch mismatches: {len(check.launch_mismatches)}")
for m in check.field_mismatches[:40]:
    print("  field", m.kernel, m.field, "offline", m.offline, "driver", m.driver, m.detail)
for m in check.launch_mismatches[:20]:
    print("  launch", m.kernel, m.detail, "calculated", m.offline, "driver", m.driver)
for t in check.triton:
    print(f"  triton {t.kernel}: {t.num_warps} warps, {t.shared_bytes} B shared, registers "
          f"{t.registers_offline} (Triton n_regs {t.registers_triton}), blocks/SM calculated "
          f"{t.active_blocks_calculated} driver {t.active_blocks_driver}")
if check.triton_error:
    print("  triton error:", check.triton_error)
print("compile errors:", check.compile_errors or "none")
print(f"seconds: {check.seconds:.1f}")
