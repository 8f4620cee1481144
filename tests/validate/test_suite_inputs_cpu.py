"""What the suite's kernels are predicted from, as one record (`PredictionInputs`), on the CPU."""

import pytest
from pydantic import ValidationError

import roofline
from roofline import models
from validate.suite._suite import PredictionInputs, _roofline_predictions

H200 = roofline.gpu("H200")


@pytest.mark.parametrize(("fields", "match"), [
    ({"database_gpu": "H200"}, "database_gpu"),                 # a name, not a database entry
    ({"measured": {"dram": "fast"}}, "measured"),               # a ceiling that is no number
    ({"calibration": {"knee_sharpness": "soft"}}, "calibration"),
    ({"quick": True}, "extra"),                                 # a timing option, not a prediction input
], ids=["gpu name", "ceiling not a number", "calibration not one", "unknown field"])
def test_the_inputs_refuse_what_no_prediction_takes(fields, match):
    with pytest.raises(ValidationError, match=match):
        PredictionInputs(**fields)


def test_the_inputs_keep_the_entry_and_are_frozen():
    inputs = PredictionInputs(database_gpu=H200, measured={"dram": 4e12, "fp32": None})
    assert inputs.database_gpu is H200 and inputs.measured == {"dram": 4e12, "fp32": None}
    assert inputs.calibration is None
    with pytest.raises(ValidationError):
        inputs.measured = {}


# A copy of n floats moves 8n bytes and no flops: its roofline time is the bytes over the
# DRAM ceiling (the roofline's definition), whichever ceiling is given.
COPY = models.copy(1 << 20)


@pytest.mark.parametrize(("inputs", "datasheet", "measured"), [
    (PredictionInputs(), None, None),
    (PredictionInputs(measured={"dram": 4e12}), None, 8 * (1 << 20) / 4e12),
    (PredictionInputs(database_gpu=H200), 8 * (1 << 20) / H200.bandwidth("dram"), None),
    (PredictionInputs(database_gpu=H200, measured={"dram": 4e12}), 8 * (1 << 20) / H200.bandwidth("dram"),
     8 * (1 << 20) / 4e12),
], ids=["nothing", "measured only", "datasheet only", "both"])
def test_a_copy_is_predicted_from_the_ceilings_given(inputs, datasheet, measured):
    base, seconds = _roofline_predictions(COPY, inputs)
    assert base["predicted_seconds"] == (None if datasheet is None else pytest.approx(datasheet))
    assert seconds == (None if measured is None else pytest.approx(measured))
    assert base["predicted_seconds_measured_ceilings"] == seconds
    assert base["regime"] == (None if datasheet is None and measured is None else "dram")
