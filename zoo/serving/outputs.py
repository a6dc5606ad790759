"""Prediction outputs as JSON lines: one object per request row, every output of the
signature (attention included), NumPy values as lists, strings as text."""

import json

import numpy as np

from zoo.serving.errors import AnswerError


def to_json_value(value):
    """A NumPy array / scalar / bytes -> plain JSON values (`bytes` decoded as UTF-8,
    invalid bytes replaced)."""
    if isinstance(value, np.ndarray):
        flat = value.dtype.kind not in "OSU"  # numbers need no decoding
        return value.tolist() if flat else to_json_value(value.tolist())
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    return value


def non_finite(value):
    """The first NaN or infinity of the array `value` (as `nan`, `inf`, `-inf`
    text), or None when every number is finite or it holds no floats."""
    if value.dtype.kind not in "fc" or np.isfinite(value).all():
        return None
    return str(value[~np.isfinite(value)].flat[0])


def output_rows(outputs, batch_size):
    """Splits a batch's outputs into one dict per row.

    Args:
        outputs: `{output_name: array}` of one request.
        batch_size: the request's number of rows.

    Returns:
        A list of `batch_size` dicts `{output_name: JSON value}` (keys sorted); a
        scalar output (a signature-wide value, rank 0) is repeated in every row.

    Raises:
        zoo.serving.errors.AnswerError: an output whose leading dimension is not
            `batch_size` (an answer of one row is not copied into three), or that
            holds NaN or an infinity (as `zoo verify` refuses them).
    """
    rows = [{} for _ in range(batch_size)]
    for name in sorted(outputs):
        value = np.asarray(outputs[name])
        if (bad := non_finite(value)) is not None:
            raise AnswerError(f"output {name!r} holds {bad}, not a finite number")
        if value.ndim == 0:
            whole = to_json_value(value)
            for row in rows:
                row[name] = whole
            continue
        if value.shape[0] != batch_size:
            raise AnswerError(
                f"output {name!r} has {value.shape[0]} rows for a request of "
                f"{batch_size} rows"
            )
        for i in range(batch_size):
            rows[i][name] = to_json_value(value[i])
    return rows


def json_line(row):
    """One JSON line (UTF-8 text kept readable; NaN/Infinity as TF Serving's REST API
    writes them)."""
    return json.dumps(row, ensure_ascii=False, allow_nan=True)
