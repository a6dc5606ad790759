"""The MemN2N family: end-to-end memory networks for bAbI question answering.

Model and training pieces (Keras only, imported with the package):

- `MemN2N`: the network (Sukhbaatar et al. 2015); `model(inputs)` returns
  `{"probabilities", "attention"}`. Its defaults are the recipe's with `--data`.
- `ClippedSGD`: SGD clipping each weight's summed gradient.
- `LinearStart`, `LinearStartSchedule`, `step_decay`: linear start and the
  paper's learning-rate schedule.
- `RunCache`, `run_key`: finished runs kept and reused.
- `BabiExample`: one question with its memory (what `zoo.data.babi` reads).

TensorFlow pieces (imported on first use):

- `MemN2NQuestionAnswerer` (the task: raw stories and questions in; `fit` with
  answers as words, `predict`, `predict_answers`, `explain`, `save_to_preset`,
  `export`) and its `MemN2NQuestionAnswererPreprocessor` layer.
- `MemN2NPreprocessor`: raw story and question strings -> word ids, in graph;
  `tokenize` (the family's words, for training and serving) and
  `MAX_STORY_BYTES`.
- `MemN2NServing`: the exported signatures (`serving_default`, `preprocess`);
  `export_memn2n` exports a trained task with them (and as `VERSION.keras`).
- `linear_start_callbacks`, `train_memn2n`, `best_of_restarts`, `train_groups`:
  the paper's training protocol for the task (`memn2n_training`).
- `build_arrays`, `build_vocabulary`, `max_sentence_length`, `vectorize`,
  `dense_stories`, `make_dataset`, `random_empty_memories`, `concat_arrays`,
  `select`, `training_groups`, `predict`, `error_rate`: bAbI examples as arrays
  and batches (`babi_arrays`).
- `evaluate_tasks`, `summarize_errors`, `format_error_table`,
  `write_error_report`, `plot_attention`, `plot_task_attention`,
  `PAPER_1K_JOINT_PE_LS_RN`, `paper_errors`, `write_task_reports`: results
  (`babi_report`).
"""

from zoo.models.memn2n.clipped_sgd import ClippedSGD
from zoo.models.memn2n.linear_start import LinearStart, LinearStartSchedule, step_decay
from zoo.models.memn2n.memn2n import MemN2N
from zoo.models.memn2n.run_cache import RunCache, run_key
from zoo.text.babi_example import BabiExample

_LAZY = {
    "MemN2NQuestionAnswerer": "memn2n_question_answerer",
    "MemN2NQuestionAnswererPreprocessor": "memn2n_question_answerer_preprocessor",
    "MemN2NPreprocessor": "memn2n_preprocessor",
    "MAX_STORY_BYTES": "memn2n_preprocessor",
    "tokenize": "memn2n_preprocessor",
    "MemN2NServing": "memn2n_serving",
    "export_memn2n": "memn2n_question_answerer",
    "linear_start_callbacks": "memn2n_training",
    "train_memn2n": "memn2n_training",
    "best_of_restarts": "memn2n_training",
    "train_groups": "memn2n_training",
    "build_arrays": "babi_arrays",
    "build_vocabulary": "babi_arrays",
    "max_sentence_length": "babi_arrays",
    "vectorize": "babi_arrays",
    "dense_stories": "babi_arrays",
    "make_dataset": "babi_arrays",
    "random_empty_memories": "babi_arrays",
    "concat_arrays": "babi_arrays",
    "select": "babi_arrays",
    "training_groups": "babi_arrays",
    "predict": "babi_arrays",
    "error_rate": "babi_arrays",
    "format_error_table": "babi_report",
    "evaluate_tasks": "babi_report",
    "write_error_report": "babi_report",
    "plot_task_attention": "babi_report",
    "summarize_errors": "babi_report",
    "plot_attention": "babi_report",
    "PAPER_1K_JOINT_PE_LS_RN": "babi_report",
    "paper_errors": "babi_report",
    "write_task_reports": "babi_report",
}

__all__ = [
    "BabiExample",
    "ClippedSGD",
    "LinearStart",
    "LinearStartSchedule",
    "MAX_STORY_BYTES",
    "MemN2N",
    "MemN2NPreprocessor",
    "MemN2NQuestionAnswerer",
    "MemN2NQuestionAnswererPreprocessor",
    "MemN2NServing",
    "PAPER_1K_JOINT_PE_LS_RN",
    "RunCache",
    "best_of_restarts",
    "build_arrays",
    "build_vocabulary",
    "concat_arrays",
    "dense_stories",
    "error_rate",
    "evaluate_tasks",
    "export_memn2n",
    "format_error_table",
    "linear_start_callbacks",
    "paper_errors",
    "make_dataset",
    "max_sentence_length",
    "plot_attention",
    "plot_task_attention",
    "predict",
    "random_empty_memories",
    "run_key",
    "select",
    "step_decay",
    "summarize_errors",
    "tokenize",
    "train_groups",
    "train_memn2n",
    "training_groups",
    "vectorize",
    "write_error_report",
    "write_task_reports",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"zoo.models.memn2n.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'zoo.models.memn2n' has no attribute {name!r}")
