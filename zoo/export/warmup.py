"""TF Serving warm-up requests: `VERSION/assets.extra/tf_serving_warmup_requests`.

TF Serving replays this TFRecord of `PredictionLog` protos when it loads a version
(`--enable_model_warmup`, on by default), so the first user request does not pay for
graph initialisation. The requests are built from real example inputs.
"""

import os
import re

import tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_log_pb2


def build_requests(model_name, warmup, input_specs):
    """Builds `PredictionLog` protos, one request per signature with a batch of inputs.

    Args:
        model_name: the served model name (the `NAME` of `saved_models/NAME`).
        warmup: `{signature: {input_name: [values of one batch]}}`.
        input_specs: `{signature: {input_name: tf.DType}}` from the signatures.

    Returns:
        list of `prediction_log_pb2.PredictionLog`.
    """
    logs = []
    for signature, inputs in warmup.items():
        if signature not in input_specs:
            raise ValueError(
                f"Warm-up names an unknown signature. Received: {signature!r}; "
                f"signatures: {sorted(input_specs)!r}"
            )
        expected = input_specs[signature]
        if set(inputs) != set(expected):
            raise ValueError(
                f"Warm-up inputs of {signature!r} must be exactly {sorted(expected)!r}. "
                f"Received: {sorted(inputs)!r}"
            )
        sizes = {len(v) for v in inputs.values()}
        if len(sizes) != 1 or 0 in sizes:
            raise ValueError(
                f"Warm-up inputs of {signature!r} must be non-empty batches of one size. "
                f"Received sizes: {sorted(sizes)!r}"
            )
        spec = {"name": model_name, "signature_name": signature}
        request = predict_pb2.PredictRequest(model_spec=spec)
        for input_name, values in inputs.items():
            tensor = tf.make_tensor_proto(values, dtype=expected[input_name])
            request.inputs[input_name].CopyFrom(tensor)
        logs.append(prediction_log_pb2.PredictionLog(predict_log={"request": request}))
    return logs


def write_warmup(path, logs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tf.io.TFRecordWriter(path) as writer:
        for log in logs:
            writer.write(log.SerializeToString())
    return path


def read_warmup(path):
    """Yields `(signature_name, {input_name: np.ndarray})` for each warm-up record.

    Raises:
        zoo.errors.DataError: a file that is not a TFRecord of `PredictionLog`
            requests (TF Serving would fail to load the version), naming the file
            and the record.
    """
    from google.protobuf.message import DecodeError

    from zoo.errors import DataError

    number = 0
    try:
        for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
            log = prediction_log_pb2.PredictionLog.FromString(record)
            request = log.predict_log.request
            inputs = {k: tf.make_ndarray(v) for k, v in request.inputs.items()}
            yield request.model_spec.signature_name or "serving_default", inputs
            number += 1
    except (tf.errors.OpError, DecodeError, TypeError, ValueError) as e:
        raise DataError(
            f"record {number}: not a TFRecord of PredictionLog warm-up requests "
            f"({_reason(e)}); TF Serving would fail to load this version",
            path=path,
        ) from None


def _reason(error):
    """TensorFlow's words for `error` in one short line, without the op's name."""
    text = " ".join(str(getattr(error, "message", error)).split())
    text = re.sub(r"^\{\{function_node [^}]*\}\}\s*|\s*\[Op:[^\]]*\].*$", "", text)
    return text[:200] or type(error).__name__
