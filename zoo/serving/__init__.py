"""Answers from exports: locally as TF Serving loads them, or from a running TF Serving.

Public API (imported lazily: `import zoo.serving` imports neither TensorFlow nor grpc):

- `SavedModelSession(path)`: an export loaded the way TF Serving loads it (C++ loader in
  a `tf.compat.v1.Session`, tensorflow-text ops registered first); `.predict(inputs,
  signature)`, `.signature_spec(signature)`.
- `GrpcClient(address, model)`, `RestClient(address, model)`: the same `.predict` and
  `.signature_spec` against TF Serving's gRPC and REST APIs.
- `read_rows`, `rows_from_texts`, `columns`, `batches`: requests from txt/jsonl/csv.
- `output_rows`, `json_line`: answers as JSON lines.
- `ServingError`: a refused or failed request (one line, exit status 2 in `zoo`).
- `zoo.serving.testing.serve_export(path)`: gRPC + REST stand-ins for TF Serving.
"""

_EXPORTS = {
    "SavedModelSession": "zoo.serving.saved_model_session",
    "GrpcClient": "zoo.serving.grpc_client",
    "RestClient": "zoo.serving.rest_client",
    "ServingError": "zoo.serving.errors",
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
