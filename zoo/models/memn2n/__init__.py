"""The MemN2N family: end-to-end memory networks for bAbI question answering.

Model and training pieces (Keras only, imported with the package):

- `MemN2N`: the model (Sukhbaatar et al. 2015); `model(inputs)` returns
  `{"probabilities", "attention"}`, `model.training_model()` is the view to fit.
- `ClippedSGD`: SGD clipping each weight's summed gradient.
- `LinearStart`, `LinearStartSchedule`, `step_decay`: linear start and the
  paper's learning-rate schedule.
- `RunCache`, `run_key`: finished runs kept and reused.

TensorFlow pieces (imported on first use):

- `MemN2NQuestionAnswerer` (the task: raw stories and questions in; `fit` with
  answers as words, `predict`, `predict_answers`, `explain`, `save_to_preset`,
  `export`) and its `MemN2NQuestionAnswererPreprocessor` layer.
- `MemN2NPreprocessor`: raw story and question strings -> word ids, in graph.
- `MemN2NServing`: the exported signatures (`serving_default`, `preprocess`);
  `export_memn2n` exports a trained model with them (and the task as
  `VERSION.keras`).
- `compile_training_model`, `linear_start_callbacks`, `train_memn2n`,
  `best_of_restarts`: the paper's training protocol (`memn2n_training`).
- `build_arrays`, `concat_arrays`, `select`, `training_groups`, `predict`,
  `error_rate`: bAbI tasks as arrays (`babi_arrays`).
- `evaluate_tasks`, `summarize_errors`, `format_error_table`,
  `write_error_report`, `plot_attention`, `plot_task_attention`,
  `PAPER_1K_JOINT_PE_LS_RN`: results (`babi_report`).
"""

from zoo.models.memn2n.clipped_sgd import ClippedSGD
from zoo.models.memn2n.linear_start import LinearStart
from zoo.models.memn2n.linear_start_schedule import LinearStartSchedule, step_decay
from zoo.models.memn2n.memn2n import MemN2N
from zoo.models.memn2n.run_cache import RunCache, run_key

_LAZY = {
    "MemN2NQuestionAnswerer": "memn2n_question_answerer",
    "MemN2NQuestionAnswererPreprocessor": "memn2n_question_answerer_preprocessor",
    "MemN2NPreprocessor": "memn2n_preprocessor",
    "MemN2NServing": "memn2n_serving",
    "export_memn2n": "memn2n_serving",
    "compile_training_model": "memn2n_training",
    "linear_start_callbacks": "memn2n_training",
    "train_memn2n": "memn2n_training",
    "best_of_restarts": "memn2n_training",
    "build_arrays": "babi_arrays",
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
}

__all__ = [
    "ClippedSGD",
    "LinearStart",
    "LinearStartSchedule",
    "MemN2N",
    "MemN2NPreprocessor",
    "MemN2NQuestionAnswerer",
    "MemN2NQuestionAnswererPreprocessor",
    "MemN2NServing",
    "PAPER_1K_JOINT_PE_LS_RN",
    "RunCache",
    "best_of_restarts",
    "build_arrays",
    "compile_training_model",
    "concat_arrays",
    "error_rate",
    "evaluate_tasks",
    "export_memn2n",
    "format_error_table",
    "linear_start_callbacks",
    "plot_attention",
    "plot_task_attention",
    "predict",
    "run_key",
    "select",
    "step_decay",
    "summarize_errors",
    "train_memn2n",
    "training_groups",
    "write_error_report",
]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        module = importlib.import_module(f"zoo.models.memn2n.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module 'zoo.models.memn2n' has no attribute {name!r}")
