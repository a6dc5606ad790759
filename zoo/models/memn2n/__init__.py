"""The MemN2N family: end-to-end memory networks for bAbI question answering.

- `MemN2N`: the network (Sukhbaatar et al. 2015); `model(inputs)` returns
  `{"probabilities", "attention"}`. Its defaults are the recipe's with `--data`.
- `MemN2NQuestionAnswerer`: the task (raw stories and questions in; `fit` with
  answers as words, `predict`, `predict_answers`, `explain`, `save_to_preset`,
  `export`: the signatures `serving_default` and `preprocess`) and its
  `MemN2NQuestionAnswererPreprocessor` layer (raw story and question strings ->
  word ids, in graph).
- `ClippedSGD`: SGD clipping each weight's summed gradient.

The training protocol (`memn2n_training`, `linear_start`, `run_cache`), bAbI arrays
(`babi_arrays`) and reports (`babi_report`) are imported from their modules.
"""

from zoo.models.memn2n.clipped_sgd import ClippedSGD
from zoo.models.memn2n.memn2n import MemN2N
from zoo.models.memn2n.memn2n_question_answerer import MemN2NQuestionAnswerer
from zoo.models.memn2n.memn2n_question_answerer_preprocessor import (
    MemN2NQuestionAnswererPreprocessor,
)

__all__ = [
    "ClippedSGD",
    "MemN2N",
    "MemN2NQuestionAnswerer",
    "MemN2NQuestionAnswererPreprocessor",
]
