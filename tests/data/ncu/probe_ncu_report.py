"""Print what NVIDIA's ncu_report module exposes for one report (API shape, first kernels)."""

import glob
import sys

sys.path.extend(sorted(glob.glob("/opt/nvidia/nsight-compute/*/extras/python")))
sys.path.extend(sorted(glob.glob("/usr/local/cuda/nsight-compute*/extras/python")))
import ncu_report  # noqa: E402

ctx = ncu_report.load_report(sys.argv[1])
print("module", ncu_report.__file__)
print("IContext", [n for n in dir(ctx) if not n.startswith("_")])
print("ranges", ctx.num_ranges())
rng = ctx.range_by_idx(0)
print("IRange", [n for n in dir(rng) if not n.startswith("_")], rng.num_actions())
for index in range(min(3, rng.num_actions())):
    act = rng.action_by_idx(index)
    if index == 0:
        print("IAction", [n for n in dir(act) if not n.startswith("_")])
        print("NameBase", [n for n in dir(ncu_report.IAction) if n.startswith("NameBase")])
    for base in ("NameBase_FUNCTION", "NameBase_DEMANGLED", "NameBase_MANGLED"):
        try:
            print(base, act.name(getattr(ncu_report.IAction, base)))
        except Exception as exc:  # noqa: BLE001 - a probe
            print(base, "error", exc)
    try:
        state = act.nvtx_state()
        print("nvtx domains", list(state.domains()))
        for d in state.domains():
            dom = state.domain_by_id(d)
            print(" domain", dom.name(), [n for n in dir(dom) if not n.startswith("_")], list(dom.push_pop_ranges()))
    except Exception as exc:  # noqa: BLE001
        print("nvtx error", exc)
    names = list(act.metric_names())
    print("metrics", len(names))
    for name in names:
        m = act.metric_by_name(name)
        if index == 0 and name == names[0]:
            print("IMetric", [n for n in dir(m) if not n.startswith("_")])
        try:
            value = m.value()
        except Exception as exc:  # noqa: BLE001
            value = f"error {exc}"
        try:
            unit = m.unit()
        except Exception as exc:  # noqa: BLE001
            unit = f"error {exc}"
        print(f"  {name}\t{unit}\t{m.metric_type()}\t{value!r}\t{m.num_instances()}")
