"""Answers from exports: locally as TF Serving loads them, or from a running TF Serving.

Public API (imported lazily: `import zoo.serving` imports neither TensorFlow nor grpc):

- `SavedModelSession(path)`: an export loaded the way TF Serving loads it (C++ loader in
  a `tf.compat.v1.Session`, tensorflow-text ops registered first); `.predict(inputs,
  signature)`, `.signature_spec(signature)`.
- `GrpcClient(address, model)`, `RestClient(address, model)`: the same `.predict` and
  `.signature_spec` against TF Serving's gRPC and REST APIs, each answer checked
  against its request and signature, under one deadline (`timeout`) and a size limit
  (`max_answer_bytes`, by default derived from the signature and the batch).
- `read_rows`, `rows_from_texts`, `columns`, `batches`: requests from txt/jsonl/csv.
- `output_rows`, `json_line`: answers as JSON lines.
- `ServingError`: a refused or failed request (one line, exit status 2 in `zoo`);
  `AnswerError`, its subclass: an answer that does not fit the request or the
  signature (rows, outputs, dtypes, shapes, size, deadline, not HTTP or JSON).
"""

_EXPORTS = {
    "SavedModelSession": "zoo.serving.saved_model_session",
    "GrpcClient": "zoo.serving.grpc_client",
    "RestClient": "zoo.serving.rest_client",
    "ServingError": "zoo.serving.errors",
    "AnswerError": "zoo.serving.errors",
    "read_rows": "zoo.serving.inputs",
    "rows_from_texts": "zoo.serving.inputs",
    "columns": "zoo.serving.inputs",
    "batches": "zoo.serving.inputs",
    "output_rows": "zoo.serving.outputs",
    "json_line": "zoo.serving.outputs",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'zoo.serving' has no attribute {name!r}")
