"""Device side of the cluster work (issue 9): one run on one GPU.

    python scripts/cluster_device.py OUTDIR

Writes ``device.json``, ``gpc_layout.json`` (SMs grouped by shared clusters,
`validate.measure_gpc_layout`), ``driver_clusters.json`` (every cluster query of the sweep
and the driver's answers, `validate.driver_cluster_answers`) and ``cluster_check.json``
(the calculator against those answers: on the packaged GPC layout of the device's GPU, or
on the layout just measured where none is packaged). Exit status 1 on any mismatch.
"""

import json
import sys
import time
from pathlib import Path


def _progress(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def main(argv):
    import roofline
    import validate
    from validate.checks._clusters import check_clusters, driver_cluster_answers, measured_layout
    from validate.checks._gpc_layout import measure_gpc_layout

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    session = validate.open_session(0)
    info = validate.query_device(session)
    (out / "device.json").write_text(info.model_dump_json(indent=1))
    _progress(f"{info.name}, {info.sm_count} SMs, driver {info.driver_version}")
    start = time.perf_counter()
    layout = None
    try:
        layout = measure_gpc_layout(session, info)
    except Exception as exc:  # noqa: BLE001 - the driver answers are still worth recording
        _progress(f"GPC layout measurement failed: {type(exc).__name__}: {exc}")
    if layout is not None:
        (out / "gpc_layout.json").write_text(layout.model_dump_json(indent=1))
        _progress(f"GPC layout: {layout.sms_per_gpc} ({sum(layout.sms_per_gpc)} SMs) "
                  f"in {time.perf_counter() - start:.1f} s")
        for launch in layout.launches:
            _progress(f"  cluster {launch.cluster_size:2d} dyn {launch.dynamic_shared_memory:6d}: resident "
                      f"{launch.max_resident_clusters:3d}, driver {launch.driver_max_active_clusters}, "
                      f"SMs touched {launch.sms_touched}")
    answers = driver_cluster_answers(session, info, progress=_progress)
    (out / "driver_clusters.json").write_text(json.dumps(answers, separators=(",", ":")))
    _progress(f"{len(answers['rows'])} driver answers written")
    try:
        gpu = roofline.gpc_layout(info.name)
        _progress(f"checking against the packaged layout of {gpu.name}: {gpu.sms_per_gpc}")
    except ValueError:
        if layout is None:
            _progress("no packaged layout and none measured: no check")
            return 1
        gpu = measured_layout(info.name, info.compute_capability, layout.sms_per_gpc,
                              "measured in this run (validate.measure_gpc_layout)")
        _progress(f"no packaged layout for {info.name}: checking with the measured one {gpu.sms_per_gpc}")
    check = check_clusters(session, info, gpu=gpu, answers=answers, progress=_progress)
    (out / "cluster_check.json").write_text(check.model_dump_json(indent=1))
    for m in check.mismatches[:20]:
        _progress(f"  mismatch: {m}")
    return 0 if check.mismatch_count == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
