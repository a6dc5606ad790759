"""Answers from exports: locally as TF Serving loads them, or from a running TF Serving.

Public API (`import zoo.serving` imports neither TensorFlow nor grpc: the classes
import them when they are built):

- `SavedModelSession(path)`: an export loaded the way TF Serving loads it (C++ loader in
  a `tf.compat.v1.Session`, tensorflow-text ops registered first); `.predict(inputs,
  signature)`, `.signature_spec(signature)`.
- `GrpcClient(address, model)`, `RestClient(address, model)`: the same `.predict` and
  `.signature_spec` against TF Serving's gRPC and REST APIs, each answer checked
  against its request and signature, under one deadline (`timeout`) and a size limit
  (`max_answer_bytes`, by default derived from the signature and the batch).
- `ServingError`: a refused or failed request (one line, exit status 2 in `zoo`);
  `AnswerError`, its subclass: an answer that does not fit the request or the
  signature (rows, outputs, dtypes, shapes, size, deadline, not HTTP or JSON).

Requests from txt/jsonl/csv files and answers as JSON lines: `zoo.serving.inputs`,
`zoo.serving.outputs`.
"""

from zoo.serving.errors import AnswerError, ServingError
from zoo.serving.grpc_client import GrpcClient
from zoo.serving.rest_client import RestClient
from zoo.serving.saved_model_session import SavedModelSession

__all__ = [
    "AnswerError",
    "GrpcClient",
    "RestClient",
    "SavedModelSession",
    "ServingError",
]
