"""The time model's rules: every decision of the model that could be otherwise, in one registry.

A rule is a term, a correction, a heuristic or a constant of `roofline.predict` (and of the
profile path that feeds it). Each has a justification of one kind:

``probe``
    a micro-kernel of ``gpuroof validate`` isolates the effect and measures its parameters,
    stored per GPU (`Rule.evidence` names the probe and the ``params.py`` fields);
``derivation``
    the rule follows from the hardware's documented behaviour or from counting, written
    down in docs/prediction.md (`Rule.evidence` names the section);
``corpus``
    the rule was argued from corpus kernels (`Rule.evidence` names them): such a rule is to
    be replaced by a probe of its own or removed.

Each rule has one switch point in the code, ``on("<name>")`` (or, for a whole term, the
term's name through `term`): `disabled` turns rules off for the code it runs, and a rule
turned off takes the alternative `Rule.off` states. Nothing is disabled by default, so
predictions are those of the model as it stands. The ablation (``benchmarks/rule_ablation.py``)
measures each rule's effect on the corpus.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from .._errors import RooflineError

__all__ = ["RULES", "Rule", "disabled", "on"]

Kind = Literal["probe", "derivation", "corpus"]


@dataclass(frozen=True)
class Rule:
    """One decision of the model: its name, where it lives, why it is there, and what the model
    does without it.

    Attributes
    ----------
    name : str
        The switch's name (``on(name)``; a term's rule is ``term_<term name>``).
    where : str
        ``module:function`` under ``roofline``.
    kind : str
        ``probe``, ``derivation`` or ``corpus``.
    evidence : str
        The probe and the parameters it measures, the docs/prediction.md section, or the
        corpus kernels it was argued from.
    off : str
        What the model does with the rule turned off.
    """

    name: str
    where: str
    kind: Kind
    evidence: str
    off: str


_P = "roofline/_predict/"
_D = "docs/prediction.md"
_RULES = (
    # the terms: each one absent is its seconds at 0
    Rule("term_dram", "_predict.terms.dram:dram_term", "probe",
         "prediction (idle_latency_seconds, sustained_bandwidth_fraction, knee_sharpness); "
         f"{_D} 'The model'", "the dram term's seconds are 0"),
    Rule("term_l2", "_predict.terms.l2:l2_term", "probe", "working_set (l2_read_bytes_per_second)",
         "the l2 term's seconds are 0"),
    Rule("term_l2_partial_stores", "_predict.terms.l2:l2_partial_stores_term", "probe",
         "effects (l2_partial_store_sectors_per_second, sm_partial_store_sectors_per_second)",
         "the l2_partial_stores term's seconds are 0"),
    Rule("term_l2_requests", "_predict.terms.l2:l2_requests_term", "probe", "memory_terms (l2_requests_per_second)",
         "the l2_requests term's seconds are 0"),
    Rule("term_atomics", "_predict.terms.atomics:atomics_term", "probe",
         "memory_terms (atomic_spread_updates_per_second, atomic_one_address_updates_per_second, "
         "one_address_stores_per_second)", "the atomics term's seconds are 0"),
    Rule("term_shared_atomics", "_predict.terms.shared_atomics:shared_atomics_term", "probe",
         "shared_atomics (sm_shared_atomic_one_word_updates_per_second, sm_shared_atomic_spread_updates_per_second, "
         "sm_shared_cas_one_word_attempts_per_second, sm_shared_cas_spread_attempts_per_second, "
         "shared_cas_round_trip_seconds)", "the shared_atomics term's seconds are 0"),
    Rule("term_l1_shared", "_predict.terms.l1_shared:l1_term", "derivation",
         f"{_D} 'Memory terms beyond streams' (the datasheet's 128 bytes per clock and SM)",
         "the l1_shared term's seconds are 0"),
    Rule("term_trips", "_predict.terms.trips:trips_term", "probe",
         "compute (trip_latency_seconds, trip_bytes_per_second), latency (dram/l2/l1 hit latencies)",
         "the trips term's seconds are 0"),
    Rule("term_arithmetic", "_predict.terms.instructions:arithmetic_term", "derivation",
         f"{_D} 'The model' (flops at the datasheet's roof)", "the arithmetic term's seconds are 0"),
    Rule("term_instructions", "_predict.terms.instructions:instructions_term", "derivation",
         f"{_D} 'Compute and latency terms' (one warp instruction per scheduler and clock)",
         "the instructions term's seconds are 0"),
    Rule("term_launch", "_predict.terms.launch:launch_term", "probe", "prediction (launch_overhead_seconds)",
         "the launch term's seconds are 0"),
    Rule("term_ramp", "_predict.terms.launch:ramp_term", "probe", "launch (block_ramp_seconds)",
         "the ramp term's seconds are 0"),
    Rule("term_spread", "_predict.terms.launch:spread_term", "probe", "launch (first_round_seconds_per_sm)",
         "the spread term's seconds are 0"),
    # the composition
    Rule("overlap_exponent", "_time_model:predict", "probe", "compute (overlap_exponent)",
         "the memory and compute sides join as their plain maximum"),
    Rule("phases_take_turns", "_predict.derive.step:derive", "probe",
         "compute (phase_exponent: the overlap sweep, one load, FMAs and one store a thread, fitted with the model's "
         "own terms); docs/prediction.md 'Load, then compute: the phases take turns'",
         "a block's life is its memory life alone where each thread loads once, then computes"),
    # the DRAM term's parts
    Rule("dram_granularity", "_predict.terms.dram:dram_term", "probe",
         "effects (dram_burst_bytes, dram_read_line_bytes, dram_partial_write_line_bytes, dram_page_visit_bytes), "
         "memory_terms (dram_random_burst_bytes)", "the DRAM bytes are the counted sectors (no bursts, lines, pages)"),
    Rule("dram_partial_write_fill", "_predict.terms.dram_bytes:dram_sides", "probe",
         f"effects (dram_partial_write_line_bytes); {_D} 'The block scheduler's interval under load, and a "
         "partial sector's fill'", "a sector written in part costs no 32-byte fill on the read side"),
    Rule("loaded_sector_fill", "_predict.derive.step:dram_traffic", "probe",
         "l2_writes fill (H100 SXM, 2026-12-07, two runs: a float in 2 stored, no load, 30.1 bytes read a sector; "
         "loaded first, 32.0 bytes, its load, 0.0 beyond); seen first on Nsight's DRAM reads of Rodinia bfs (dev); "
         f"{_D} 'A sector the kernel loads is not filled again'",
         "a sector the kernel loads, then writes in part, is filled from DRAM like one it never loads"),
    Rule("flush_writeback", "_predict.terms.dram:dram_term", "probe", "memory_terms (flush_dirty_bytes)",
         "no written lines of validate's L2 flush are written back"),
    Rule("read_write_roof", "_predict.terms.dram:dram_term", "probe", "working_set (dram_read_bytes_per_second)",
         "the DRAM roof is the copy's whatever the mix of reads and writes"),
    Rule("sm_port", "_predict.terms.dram:dram_term", "probe", "prediction (sm_bandwidth_bytes_per_second)",
         "a block's bytes take no time through its SM's port"),
    Rule("block_dispatch", "_predict.terms.dram:dram_term", "probe", "prediction (block_dispatch_seconds)",
         "the block scheduler does not cap the DRAM rate"),
    Rule("dram_knee", "_predict.terms.dram:dram_term", "probe", f"prediction (knee_sharpness); {_D} 'The soft knee'",
         "Little's law's rate and the roof meet as a plain minimum"),
    Rule("wave_tail", "_predict.terms.dram:dram_term", "derivation",
         f"{_D} 'The model' (a partial last wave at its own concurrency)",
         "every wave runs at a full wave's bandwidth"),
    Rule("l1_queue", "_predict.terms.dram:dram_term", "derivation",
         f"{_D} 'What the SASS adds' (warps at the L1 pipe: mean-value analysis, Reiser & Lavenberg 1980)",
         "a block's L1 passes add to its life without queueing behind the others'"),
    Rule("warp_customers", "_predict.terms.dram:dram_term", "probe",
         "rule_probes no_barrier (H100 SXM, 2026-12-06: 73.0 us measured; rule on +4%, off +21%); "
         "argued first from PolyBench's thread-per-row kernels (ATAX 1, BICG 2, MVT 1, GEMVER 3, GESUMMV: 1.3-1.6x too slow with "
         "blocks as the customers)",
         "the L1 queue's customers are whole blocks, barriers or not"),
    Rule("dram_hot_loop_waits", "_predict.terms.dram:_chain_seconds", "probe",
         "compute (trip_latency_seconds), latency", "a block waits one idle round trip per group of loads in flight"),
    Rule("barrier_wait", "_predict.terms.barriers:barrier_wait", "probe",
         "effects (tree_level_seconds, tree_level_warp_seconds)", "barriers cost no time"),
    Rule("load_phases", "_predict.terms.barriers:phase_round_trips", "derivation",
         f"{_D} 'Barrier phases' (a barrier holds the next stretch's loads until the slowest warp's "
         "are back: a round trip per load phase; the latency is prediction's idle_latency_seconds)",
         "a block's loads wait only their rounds in flight, whatever barriers split them"),
    Rule("dram_l1_passes", "_predict.terms.dram:dram_term", "derivation",
         f"{_D} 'What the SASS adds' (warps at the L1 pipe)", "a block's L1 passes are not part of its life"),
    Rule("tail_limiter", "_predict.terms.dram:dram_term", "derivation",
         f"{_D} 'Cliffs in time' (a partial last wave that costs more than a fifth: TAIL_SHARE)",
         "the DRAM term never names the tail its limiter (the time is the same)"),
    # derive
    Rule("l1_reuse", "_predict.derive.step:derive", "derivation",
         f"{_D} 'Memory terms beyond streams' (a block's footprint or two iterations fit in L1)",
         "the L2 bytes are the kernel's, none kept by L1"),
    Rule("l1_resident_blocks", "_predict.derive.step:derive", "probe",
         "rule_probes rows_pair (H100 SXM, 2026-12-07: 1, 8 and 1 blocks an SM 295.2, 158.8 and 146.4 us "
         "measured, rule on +14 / -11 / -3%, off +76 / +116 / +134%; Nsight: L1 hit 87 / 72 / 87%, 2% at the "
         "control's 32); "
         f"{_D} 'The blocks an SM holds, for L1' (a grid smaller than the GPU's room puts at most "
         "ceil(blocks / SMs) blocks on an SM)",
         "L1 reuse is judged with the occupancy's resident blocks, however few blocks the grid has"),
    Rule("l2_capacity_rereads", "_predict.derive.reuse:l2_capacity_rereads", "derivation",
         f"{_D} 'Rows read twice: rereads L2 lets go' (the datasheet's L2 size against the resident blocks' "
         "footprints; the working_set sweep's plateaus bracket it); cause_probes row_twice is its check",
         "a block's rereads of its own sectors hit L2 whatever the resident blocks' footprints"),
    Rule("requested_bytes_at_l2", "_predict.derive.reuse:kernel_misses", "derivation",
         f"{_D} 'Counts without L2 bytes': the bytes the threads ask for reach L2 at most, so DRAM moving "
         "dram_bytes of them says the share that misses L2 (a user's loose counts; a profile or a traffic "
         "description gives its own)",
         "without l2_bytes every load sector misses L2: each round of a loop waits a DRAM trip"),
    Rule("l1_open_lines", "_predict.derive.reuse:l2_bytes_with_l1_reuse", "probe",
         "open_lines' launches (rows_pair at 4-32 blocks of 64 threads an SM, H100 SXM, 2026-12-07): Nsight's L1 hit "
         "rate 86 / 73 / 68 % at 4 / 8 / 12 blocks, 35 % at 16, where the blocks' open lines (16 KB each) pass the "
         f"launch's 224 KB of L1 and their two-iteration sectors (8 KB each) do not; {_D} 'Rows in flight past L2'",
         "L1 keeps two iterations of the resident blocks while their sectors fit, whatever lines they hold open"),
    Rule("l2_open_lines", "_predict.derive.reuse:open_lines", "probe",
         "open_lines (l2_open_lines_onset_bytes, l2_open_lines_full_bytes): rows_pair at 4-32 blocks of 64 threads "
         "an SM under Nsight (H100 SXM, 2026-12-07, the probe's run: 34.4 and 62.9 MB; the exploration's DRAM reads "
         "138 MB up to 26 MB of open lines, 2.05 GB from 60 MB); "
         f"{_D} 'Rows in flight past L2'",
         "a line a block holds open across an iteration stays in L2 however many blocks hold theirs"),
    Rule("atomic_counter", "_predict.derive.step:derive", "derivation",
         f"{_D} 'What the SASS adds' (counters: the SASS's dataflow finds one address; the rate is memory_terms')",
         "the atomics' addresses stay unknown (taken as spread)"),
    Rule("atomic_contention", "_predict.terms.atomics:atomics_term", "probe",
         "memory_terms (atomic_one_address_updates_per_second)", "updates to few addresses do not queue"),
    Rule("l2_keeps_writes", "_predict.terms.dram:dram_term", "derivation",
         f"{_D} 'Written lines L2 keeps at a kernel's end' (L2 writes a line back only when a later one displaces "
         "it: the kernel's last datasheet-L2 bytes of lines stay)",
         "every byte a description writes is a DRAM write during the kernel"),
    Rule("l2_written_cap", "_predict.terms.dram:dram_term", "probe",
         "l2_writes (l2_kept_written_bytes)",
         "a kernel keeps its last datasheet-L2 bytes of lines at its end, every written one among them"),
    Rule("float_atomics", "_predict.derive.step:derive", "probe",
         "global_cas (atomic_one_address_f32_updates_per_second, atomic_one_address_f64_updates_per_second)",
         "float and double adds to one address queue at the integer adds' rate"),
    Rule("cas_contention", "_predict.terms.atomics:atomics_term", "derivation",
         f"{_D} 'Contended compare-and-swap loops' (k contenders: k rounds, k(k+1)/2 attempts; the rates are "
         "memory_terms', the round trip global_cas' cas_round_trip_seconds, else latency's l2_hit_latency_seconds; "
         "all attempts at global_cas' cas_line_attempts_per_second where measured)",
         "a CAS loop's updates queue at their address as one attempt each, with no round trips"),
    Rule("shared_cas_retries", "_predict.terms.shared_atomics:cas_attempts_per_success", "derivation",
         f"{_D} 'Shared-memory atomics' (k contenders on one word: k rounds, k(k+1)/2 attempts)",
         "a shared compare-and-swap loop makes one attempt per success"),
    Rule("shared_atomic_loops", "_predict.derive.sass:_shared_atomic_loops", "derivation",
         f"{_D} 'Shared-memory atomics' (a loop of shared atomics alone runs once per group of its ATOMS: "
         "the kernel's shared atomics over the threads)",
         "a loop of shared atomics alone is tied to no count: its instructions are left out"),
    Rule("counted_shared_atomics", "_predict.derive.shared_atomics:shared_atomics_of", "derivation",
         f"{_D} 'Shared-memory atomics' (Nsight's executed ATOMS, 32 lanes each, retries included; else the "
         "SASS's ATOMS times the hot loop's trips and the threads)",
         "shared atomics only where the kernel's description gives them"),
    Rule("triangle_work", "_predict.derive.balance:work_shares", "probe",
         "rule_probes trips_by_index (H100 SXM, 2026-12-06: 80.0 us measured; rule on -34%, off -63%); "
         "argued first from PolyBench CORR and COVAR (a loop whose trips follow the thread's index; TRIANGLE_TRIPS = 8)",
         "every block and warp does the mean work"),
    Rule("busiest_sm", "_predict.derive.balance:work_shares", "derivation",
         f"{_D} 'Compute and latency terms' (blocks go to the SMs in turn: ceil(blocks / SMs))",
         "the busiest SM runs an even share of the blocks"),
    Rule("schedulers_in_use", "_predict.derive.step:issue_slots", "derivation",
         f"{_D} 'Compute and latency terms' (min(sub-partitions, resident warps) schedulers issue)",
         "every scheduler of the SM issues"),
    Rule("sass_instruction_estimate", "_predict.derive.step:issue_slots", "derivation",
         f"{_D} 'Loads in flight from the SASS' (the hot loop runs once per group of its loads)",
         "without a counted instruction count the instructions term is 0"),
    Rule("branch_sides_in_sass", "_predict.derive.setting:straight_line_instructions", "probe",
         "branch_paths (H100 SXM, 2026-12-07: a branch splitting every warp in straight-line FMA code, "
         "75.8 us added measured; rule on 74.0 us (-2%), off 147.9 us (+95%); the same code branching per warp "
         f"39.9 us, no branch 39.2 us); {_D} 'Branches in straight-line SASS' (the SASS lists each side once, "
         "which a divergent warp issues in turn)",
         "the SASS estimate, the code outside every loop included, is multiplied by branch_issue_factor"),
    Rule("elements_as_loads", "_predict.derive.sass:loads_from_bytes", "probe",
         "grid_stride_probe (H200, 2026-12-07: grid-stride sum and scale, one load in flight, 1024 elements a "
         "thread at 1-8 blocks of 256 an SM, 384.8-735.5 us measured; described by elements_per_thread: rule on "
         f"-11% to +6%, off +9% to +70%; as described by load_bytes); {_D} 'A loop described by its elements' "
         "(the rounds count one load an element)",
         "without load_bytes the hot loop's trips are not known: the DRAM term's rounds at the fitted latency"),
    Rule("barrier_loop_trips", "_predict.derive.sass:instructions_from_sass", "probe",
         "rule_probes interleaved_tree (H100 SXM, 2026-12-07: 44.9 us measured; rule on -18%, off -53%; "
         "halving_tree 24.0 us, -12% both); seen first on cuda-samples reduce0 (dev: Nsight's instructions "
         f"checked); {_D} 'Barrier loops from source' (a barrier loop runs as often as the barriers say)",
         "a loop over shared memory is tied to no count without the kernel's shared bytes: no instruction estimate"),
    Rule("sass_barriers", "_predict.derive.step:barrier_phases", "probe",
         "rule_probes tree_of_barriers (H100 SXM, 2026-12-06: 114.1 us measured; rule on -15%, off -40%); "
         "argued first from cuda-samples reduce0-3 and shfl_scan, Rodinia hotspot and pathfinder (barrier loops passed as often as "
         "the instructions say)",
         "without the kernel's barrier count a block passes none"),
    Rule("enclosing_passes", "_predict.derive.hot_loop:enclosing_passes", "probe",
         "rule_probes short_vectors (H100 SXM, 2026-12-06: 93.7 us measured; rule on -25%, off +277%); "
         "argued first from cuda-samples scalarProd (a loop around the hot loop; IMPLIED_LOADS_LIMIT = 1.5)",
         "the hot loop's trips are read from the instruction count alone"),
    Rule("counted_load_trips", "_predict.derive.hot_loop:hot_loop_trips", "derivation",
         f"{_D} 'Loops beside the hot loop' (each trip issues the loop's loads once: where the instructions "
         "imply more than IMPLIED_LOADS_LIMIT times the counted loads and the loops beside the hot loop load "
         "nothing, those loops issued the rest); its probe, rule_probes store_loop_of_8_trips / 32 / 1, not yet "
         "timed on a device",
         "the hot loop's trips are read from the instruction count alone, every loop's instructions charged to it"),
    Rule("lone_thread", "_predict.derive.hot_loop:lone_warp", "probe",
         "rule_probes thread_0_of_grid (H100 SXM, 2026-12-06: 93.7 us measured; re-predicted offline with the rule "
         "+4% (97.3 us), off -96% (4.1 us)); lane_0_of_every_warp unchanged (97.0 us, +17%); "
         f"{_D} 'One lane runs the loop': each trip waits its level (latency: dram/l2/l1 hit latencies) and the "
         "loop's issue, one instruction a clock",
         "the share of warps that stay comes from the profile's occupancy or the counted traffic, and the "
         "loop's rounds are a whole block's (its threads' bytes, its warps' and blocks' shared lines, no issue)"),
    Rule("early_exit_share", "_predict.derive.hot_loop:staying_warps", "probe",
         "rule_probes 7_of_8_warps_leave (H100 SXM, 2026-12-06: 101.3 us measured; rule on +2%, off -83%); "
         "argued first from PolyBench GRAMSCHM kernel 1 (achieved occupancy below _EARLY_EXIT_SHARE = 0.5)",
         "every warp launched runs the hot loop"),
    Rule("nest_trips", "_predict.derive.sass:_nest_trips", "probe",
         "rule_probes inner_loop (H100 SXM, 2026-12-06: 51.3 us measured; rule on -33%, off +113%); "
         "argued first from SGEMM_CUDA's and PolyBench's tiled GEMMs (a hot loop holding loops: instructions and flops solved together)",
         "the hot loop's trips come from the instruction count alone"),
    Rule("duplicate_warps", "_predict.derive.hot_loop:hot_loop", "probe",
         "rule_probes warps_read_one_line (H100 SXM, 2026-12-06: 53.0 us measured; rule on -3%, off -74%); "
         "argued first from PolyBench row kernels at 32 x 8 threads (copies of a warp)",
         "no warps of a block share a line in one trip"),
    Rule("blocks_sharing_a_line", "_predict.derive.hot_loop:hot_loop", "probe",
         "rule_probes column_reads_one_line (H100 SXM, 2026-12-06: 88.6 us measured; rule on +13%, off -51%); "
         "argued first from PolyBench GEMM, 2MM, 3MM (a grid column of blocks loads b's line in the same trip)",
         "no resident blocks share a line in one trip"),
    Rule("trip_port_bytes", "_predict.terms.waits:trip_latency", "probe",
         "compute (trip_bytes_per_second), prediction (sm_bandwidth_bytes_per_second)",
         "a DRAM-deep round waits the latency alone, not its bytes through the SM's port"),
    Rule("issue_efficiency", "_predict.terms.instructions:issue_efficiency", "probe", "compute (fma_latency_cycles)",
         "the schedulers issue at full rate however few warps they hold"),
    Rule("tensor_rate_fraction", "_predict.terms.instructions:arithmetic_term", "probe",
         "compute (tensor_rate_fraction)", "the tensor pipe runs at its datasheet rate"),
    # the profile path
    Rule("profile_hit_rates", "_predict.derive.reuse:_hit_rates", "derivation",
         f"{_D} 'What a profile's memory counts add' (a round waits for its slowest load)",
         "the misses come from the kernel's bytes, not the profile's hit rates"),
    Rule("profile_l1_wavefronts", "_adapters:_l1_data_bytes", "derivation",
         f"{_D} 'What a profile's memory counts add' (a wavefront is a pass of up to 128 bytes)",
         "the L1 bytes are Nsight's L1 bytes"),
    Rule("profile_partial_stores", "_adapters:_partial_store_sectors", "derivation",
         f"{_D} 'What a profile's memory counts add' (a store request over more sectors than its 32 lanes fill, "
         "with a 5 % margin); the rate is effects'",
         "a profiled kernel has no partial store sectors"),
    Rule("profile_one_address_stores", "_adapters:_one_address_stores", "probe",
         "memory_terms (one_address_stores_per_second); the count: the SASS's share of one-address stores "
         "(Rodinia bfs Kernel2)",
         "a profiled kernel has no stores to one address"),
    Rule("profile_clock", "_profile:_at_profile_clock", "derivation",
         f"{_D} 'What a profile's memory counts add' (the issue and compute rates follow the SM clock)",
         "a profile is predicted at the database GPU's boost clock"),
)

#: Every rule of the model, by name.
RULES: Mapping[str, Rule] = MappingProxyType({rule.name: rule for rule in _RULES})

_DISABLED: ContextVar[frozenset[str]] = ContextVar("roofline_disabled_rules", default=frozenset())


def on(name: str) -> bool:
    """Whether rule `name` applies (it does unless `disabled` turned it off)."""
    return name not in _DISABLED.get()


@contextlib.contextmanager
def disabled(names: Iterable[str]) -> Iterator[frozenset[str]]:
    """Turn the rules `names` off for the code run inside the ``with`` block (the ablation's switch).

    Raises
    ------
    TypeError
        ``names`` is a string or not an iterable of strings.
    RooflineError
        A name that is not a rule's (the known ones are listed).
    """
    if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
        raise TypeError(f"names must be an iterable of rule names (str), not {type(names).__name__}")
    try:
        wanted = frozenset(names)
    except TypeError as exc:  # an iterable type that does not iterate (a 0-d array), or unhashable names
        raise TypeError(f"names must be an iterable of rule names (str): {exc}") from exc
    if not all(isinstance(name, str) for name in wanted):
        raise TypeError("names must be rule names (str)")
    unknown = sorted(wanted - RULES.keys())
    if unknown:
        raise RooflineError(f"rules={unknown!r} are not rules of the model; known: {sorted(RULES)}")
    token = _DISABLED.set(_DISABLED.get() | wanted)
    try:
        yield wanted
    finally:
        _DISABLED.reset(token)
