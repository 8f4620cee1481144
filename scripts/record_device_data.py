"""Turn one device run (scripts/clusters_device.sh) into the records under tests/data.

    python scripts/record_device_data.py RAWDIR GPU [RAWDIR GPU ...]

GPU is the short name used in file and column names (``h200``, ``h100``). Writes
``tests/data/cluster_queries.csv.gz`` (every cluster query and each GPU's driver answers),
``tests/data/ncu_launches.csv`` (every profiled launch: the inputs and Nsight Compute's
configuration and limits) and ``tests/data/gpc_layout_<gpu>.json``.
"""

import csv
import gzip
import io
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validate.checks._ncu_launches import ncu_launches, parse_ncu_csv  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
QUERY = ["kernel", "registers_per_thread", "static_shared_memory", "max_threads_per_block", "cluster_x",
         "cluster_y", "cluster_z", "threads_per_block", "dynamic_shared_memory", "carveout", "non_portable",
         "policy"]
ANSWERS = ["active_clusters", "active_blocks_per_sm", "potential_cluster_size"]
NCU = ["gpu", "source", "part", "kernel", "threads_per_block", "registers_per_thread", "static_shared_memory",
       "dynamic_shared_memory", "max_dynamic_shared_memory", "carveout", "block_barriers", "cluster_size",
       "shared_mem_config_size", "occupancy_limit_warps", "occupancy_limit_registers",
       "occupancy_limit_shared_mem", "occupancy_limit_blocks", "occupancy_limit_barriers", "cluster_max_active",
       "driver_active_blocks_per_sm"]


def _answer(value):
    return "error" if isinstance(value, str) else value


def _short(name):
    # The name up to its parameter list (templates kept), at most 100 characters.
    return name.split("(")[0][:100]


def main(argv):
    runs = list(zip(argv[0::2], argv[1::2]))
    queries: dict[tuple, dict] = {}
    ncu_rows = []
    for raw, gpu in runs:
        raw = Path(raw)
        answers = json.loads((raw / "driver_clusters.json").read_text())
        cols = {c: i for i, c in enumerate(answers["columns"])}
        for row in answers["rows"]:
            k = answers["kernels"][row[cols["kernel"]]]
            key = (k["name"], k["registers_per_thread"], k["static_shared_memory"], k["max_threads_per_block"],
                   *(row[cols[c]] for c in QUERY[4:]))
            entry = queries.setdefault(key, {})
            for a in ANSWERS:
                entry[f"{gpu}_{a}"] = _answer(row[cols[a]])
        shutil.copy(raw / "gpc_layout.json", DATA / f"gpc_layout_{gpu}.json")
        manifest_path = raw / "ncu_manifest.jsonl"
        synthetic = ncu_launches(parse_ncu_csv((raw / "ncu_synthetic.csv").read_text(errors="replace")))
        if manifest_path.exists():
            entries = [json.loads(line) for line in manifest_path.read_text().splitlines() if line.strip()]
            pairs = zip(synthetic, [e for e in entries if e["launched"]])
        else:
            pairs = ((launch, None) for launch in synthetic)
        for launch, entry in pairs:
            if not isinstance(launch.get("occupancy_limit_warps"), float):
                continue  # a launch the profiler did not finish
            ncu_rows.append(_ncu_row(gpu, "synthetic", launch, entry))
        for launch in ncu_launches(parse_ncu_csv((raw / "ncu_torch.csv").read_text(errors="replace"))):
            ncu_rows.append(_ncu_row(gpu, "pytorch", launch, None))
    gpus = [gpu for _, gpu in runs]
    header = QUERY + [f"{g}_{a}" for g in gpus for a in ANSWERS]
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for key, entry in queries.items():
        writer.writerow([*key, *(entry.get(h, "") for h in header[len(QUERY):])])
    with gzip.open(DATA / "cluster_queries.csv.gz", "wt", encoding="utf-8", compresslevel=9) as f:
        f.write(text.getvalue())
    with open(DATA / "ncu_launches.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(NCU)
        writer.writerows(ncu_rows)
    print(f"{len(queries)} cluster queries, {len(ncu_rows)} profiled launches")
    return 0


def _ncu_row(gpu, source, launch, entry):
    def i(name):
        return int(launch[name])

    carveout = "" if entry is None or entry["carveout"] is None else entry["carveout"]
    attribute = "" if entry is None or entry["max_dynamic_shared_memory"] is None else entry["max_dynamic_shared_memory"]
    return [gpu, source, "resources" if entry is None else entry["part"], _short(launch["kernel"]),
            i("block_size"), i("registers_per_thread"), i("shared_mem_per_block_static"),
            i("shared_mem_per_block_dynamic"), attribute, carveout, i("barrier_count"), max(i("cluster_size"), 1),
            i("shared_mem_config_size"), i("occupancy_limit_warps"), i("occupancy_limit_registers"),
            i("occupancy_limit_shared_mem"), i("occupancy_limit_blocks"), i("occupancy_limit_barriers"),
            i("cluster_max_active"), "" if entry is None else entry.get("driver_active_blocks_per_sm", "")]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
