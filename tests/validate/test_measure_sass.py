"""`validate.measure`'s prediction reads the SASS of the binary it timed, as the source and profile
paths do (validate/user_kernel/_sass.py, `_prediction`): offline, with NVRTC's cubin where it is
installed and with a SASS summary written out where it is not needed."""

import pytest

import occupancy
import roofline
from occupancy import _nvdisasm
from validate.probes._cause_probes import offline_prediction, probe_kernel
from validate.probes._cause_variants import CAUSE_VARIANTS
from validate.user_kernel._measure import _prediction
from validate.user_kernel._sass import with_sass

GRID_STRIDE = r"""
extern "C" __global__ void grid_stride_sum(const float* __restrict__ x, float* __restrict__ out, int n) {
    float s = 0.0f;
    #pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""


def _driver_resources(registers: int = 14) -> occupancy.KernelResources:
    """What `validate.device.kernel_resources` reads of a loaded kernel: the driver's figures, no SASS."""
    return occupancy.KernelResources(kernel="kernel", architecture="sm_90", registers_per_thread=registers,
                                     sources={"registers_per_thread": "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS)"})


@pytest.fixture(scope="module")
def nvrtc_cubin() -> bytes:
    """GRID_STRIDE built by the NVRTC path `validate.measure` compiles with (no GPU needed)."""
    pytest.importorskip("cuda.core", reason="cuda-python is not installed")
    if not _nvdisasm.nvdisasm_candidates():
        pytest.skip(f"nvdisasm is not installed ({_nvdisasm.INSTALL_HINT})")
    from validate.device import compile_cubin

    try:
        module = compile_cubin(GRID_STRIDE, arch="sm_90", name="grid_stride.cu")
    except Exception as exc:  # noqa: BLE001 - NVRTC's wheel missing is a skip, not a failure
        if not (type(exc).__module__ or "").startswith("cuda."):
            raise
        pytest.skip(f"NVRTC cannot compile here: {exc}")
    return bytes(module.code)


def test_the_timed_cubin_s_sass_joins_the_driver_s_resources(nvrtc_cubin):
    found = with_sass(_driver_resources(), nvrtc_cubin, "grid_stride_sum", "sm_90")
    assert found.sass is not None and found.sass.hot_loop is not None
    assert found.sass.global_loads_in_flight_per_thread == 1  # `#pragma unroll 1`: one load a trip
    assert "disassembled by" in found.sources["sass"]
    assert found.registers_per_thread == 14  # the driver's figures stay


@pytest.mark.parametrize(("binary", "kernel", "why"), [
    (None, "grid_stride_sum", "binary was not kept"),
    (b"not an ELF", "grid_stride_sum", "not read:"),
], ids=["no-binary", "not-a-cubin"])
def test_without_sass_the_resources_say_why(binary, kernel, why):
    found = with_sass(_driver_resources(), binary, kernel, "sm_90")
    assert found.sass is None and why in found.sources["sass"]


def test_a_kernel_the_binary_lacks_is_named(nvrtc_cubin):
    found = with_sass(_driver_resources(), nvrtc_cubin, "no_such_kernel", "sm_90")
    assert found.sass is None and "no_such_kernel" in found.sources["sass"]


def _one_load_loop() -> occupancy.SassSummary:
    """grid_stride_sum's loop as nvdisasm lists it: one strided LDG.E a trip."""
    body = occupancy.SassCounts(total=6, global_loads=1, fp32_add=1, branches=1)
    loop = occupancy.SassLoop(start_offset=0x120, end_offset=0x170, depth=1, instructions=body,
                              global_loads_in_flight=1, fewest_loads_in_flight=1)
    return occupancy.SassSummary(
        architecture="sm_90", disassembler="listing", loops=(loop,), hot_loop=0,
        instructions=occupancy.SassCounts(total=26, global_loads=1, global_stores=1, fp32_add=1, branches=2),
        global_loads_in_flight_per_thread=1, global_load_bytes=4,
        hot_loop_load_sources=(("x", "ctaid.x", "loop", "stride"),))


@pytest.mark.parametrize("variant", [v for v in CAUSE_VARIANTS if v.cause == "grid_stride"], ids=lambda v: v.variant)
def test_the_measured_prediction_is_the_source_path_s(variant):
    """With the SASS in the resources, `measure`'s prediction is the one the cause probes' source
    path makes (`offline_prediction` with the SASS: one implementation); without it, one round trip a
    thread, and a note says so."""
    sass = _one_load_loop()
    launch = occupancy.Launch(grid=variant.grid, block=variant.block)
    resources = _driver_resources().model_copy(update={"sass": sass})
    counts = probe_kernel(variant)
    with_it, notes = _prediction(_gpu(), counts, launch, resources, seconds=1e-4, after_l2_flush=True)
    expected = offline_prediction(variant, _gpu(), registers_per_thread=14, sass=sass).seconds
    assert with_it["predicted_seconds"] == pytest.approx(expected, rel=1e-12)
    assert not any("no SASS" in n for n in notes)
    without, notes = _prediction(_gpu(), counts, launch, _driver_resources(), seconds=1e-4, after_l2_flush=True)
    assert without["predicted_seconds"] == pytest.approx(
        offline_prediction(variant, _gpu(), registers_per_thread=14).seconds, rel=1e-12)
    assert any("no SASS" in n and "one global load round trip" in n for n in notes)
    if variant.grid == 256:  # 512 dependent trips a thread: the waits the SASS reveals
        assert with_it["predicted_seconds"] > 2 * without["predicted_seconds"]


def _gpu():
    return roofline.gpu("H100 SXM")


def test_a_loop_without_load_bytes_says_what_to_give():
    """The SASS shows a loop of loads; counts without ``load_bytes`` leave its trips unknown, and the
    measurement's notes carry the prediction's line that says which count to give."""
    resources = _driver_resources().model_copy(update={"sass": _one_load_loop()})
    counts = roofline.Kernel(name="grid_stride_sum", flops=2**26, dram_bytes=4 * 2**26, precision="fp32")
    launch = occupancy.Launch(grid=256, block=256)
    _, notes = _prediction(_gpu(), counts, launch, resources, seconds=1e-4, after_l2_flush=True)
    assert any("gives no load_bytes" in n for n in notes)
    with_bytes = counts.model_copy(update={"load_bytes": 4 * 2**26})
    _, notes = _prediction(_gpu(), with_bytes, launch, resources, seconds=1e-4, after_l2_flush=True)
    assert not any("gives no load_bytes" in n for n in notes)


@pytest.mark.gpu
def test_the_timed_kernel_s_sass_reaches_the_prediction_on_the_gpu(gpu_session):
    """On a device: `measure` reads the SASS of the cubin it timed (a loop, one load in flight) and
    predicts with it, as `_prediction` does with those resources offline."""
    import numpy as np
    import validate

    if not _nvdisasm.nvdisasm_candidates():
        pytest.skip(f"nvdisasm is not installed ({_nvdisasm.INSTALL_HINT})")
    n, grid, block = 1 << 24, 256, 256
    x = np.random.default_rng(5).random(n, dtype=np.float32)
    counts = roofline.Kernel(name="grid_stride_sum", flops=n, dram_bytes=4 * n, load_bytes=4 * n,
                             store_bytes=4 * grid * block, precision="fp32")
    launch = occupancy.Launch(grid=grid, block=block)
    m = validate.measure(GRID_STRIDE, "grid_stride_sum", launch=launch, args=[x, f"f32[{grid * block}]", np.int32(n)],
                         counts=counts, session=gpu_session,
                         options=validate.MeasureOptions(budget_seconds=0.1, gpu="H100 SXM"))
    assert m.resources.sass is not None and m.resources.sass.hot_loop is not None, m.resources.sources.get("sass")
    assert not any("no SASS" in note for note in m.notes)
    again, _ = _prediction(_gpu(), counts, launch, m.resources, m.seconds, after_l2_flush=True)
    assert m.predicted_seconds == pytest.approx(again["predicted_seconds"], rel=1e-12)
