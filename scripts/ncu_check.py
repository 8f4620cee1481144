"""Compare Nsight Compute's launch metrics with occupancy's driver configuration.

    python scripts/ncu_check.py RAWDIR

RAWDIR holds ncu_synthetic.csv with ncu_manifest.jsonl (the synthetic launches, whose
carveout and attribute the manifest gives) and ncu_torch.csv (a PyTorch program's kernels,
assumed to set no carveout). Prints the counts and every difference; writes
ncu_check.json next to them.
"""

import collections
import json
import sys
from pathlib import Path


def main(argv):
    import occupancy
    from validate.checks._ncu_launches import compare_launch, ncu_launches, parse_ncu_csv

    raw = Path(argv[0])
    arch = occupancy.architecture("sm_90")
    report = {"synthetic": [], "torch": []}
    manifest_path = raw / "ncu_manifest.jsonl"
    if (raw / "ncu_synthetic.csv").exists() and manifest_path.exists():
        rows = ncu_launches(parse_ncu_csv((raw / "ncu_synthetic.csv").read_text(errors="replace")))
        entries = [json.loads(line) for line in manifest_path.read_text().splitlines() if line.strip()]
        manifest = [e for e in entries if e["launched"]]
        for launch, entry in zip(rows, manifest):
            if launch["kernel"] != entry["kernel"]:
                print(f"order lost at ncu ID {launch['id']}: {launch['kernel']} vs {entry['kernel']}")
                break
            out = compare_launch(launch, arch, entry["carveout"], entry["max_dynamic_shared_memory"])
            report["synthetic"].append({"id": launch["id"], "entry": entry, **out})
    if (raw / "ncu_torch.csv").exists():
        for launch in ncu_launches(parse_ncu_csv((raw / "ncu_torch.csv").read_text(errors="replace"))):
            try:
                out = compare_launch(launch, arch)
                if out["differences"]:
                    # A library kernel may prefer the largest carveout; the profile does not say.
                    with_max = compare_launch(launch, arch, carveout=100)
                    if not with_max["differences"]:
                        out = {**with_max, "carveout_100": True}
            except (ValueError, TypeError, KeyError) as exc:
                out = {"error": str(exc), "differences": {"error": 1}}
            report["torch"].append({"id": launch["id"], "kernel": launch["kernel"][:80], **out})
    (raw / "ncu_check.json").write_text(json.dumps(report, indent=0, default=str))
    for part, items in report.items():
        bad = [i for i in items if i["differences"]]
        fields = collections.Counter(k for i in bad for k in i["differences"])
        with_max = sum(bool(i.get("carveout_100")) for i in items)
        print(f"{part}: {len(items)} launches, {len(items) - len(bad)} equal ({with_max} of them with a 100% "
              f"carveout), differing fields {dict(fields)}")
        for i in bad[:12]:
            print("  ", i.get("kernel", i.get("entry", {}).get("kernel")), i.get("inputs"), i["differences"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
