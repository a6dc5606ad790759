"""The recipe framework: one `Config` dataclass and one `Recipe` subclass per task.

```python
import dataclasses

from zoo.recipe import Recipe, RecipeConfig, option


@dataclasses.dataclass
class Config(RecipeConfig):
    max_words: int = option(50, "words kept per sentence", demo=16, check="positive")


class MyTask(Recipe):
    name = "my_task"              # runs/my_task/, reports/my_task/
    export_name = "my_model"      # saved_models/my_model/VERSION/
    metric = "accuracy"           # the headline key of evaluate()'s result
    config_class = Config
    training_defaults = dict(epochs=10, batch_size=32, learning_rate=1e-3)
    demo_training_defaults = dict(epochs=3, patience=0)

    def load_data(self): ...
    def build_model(self, data): ...
    def evaluate(self, model, data): ...
    def report(self, model, data, metrics): ...
    def export(self, model, data, metrics): ...


main = MyTask.main
```

Every recipe gets the same common flags (`--data`, `--run-dir`, `--report-dir`,
`--export-dir`, `--no-export`, `--max-train-samples`, `--max-eval-samples`,
`--demo-size`, `--report-samples`, `--xla`, `--debug`) and training flags (from
`zoo.training.TrainingConfig`: `--epochs`, `--batch-size`, `--learning-rate`, `--seed`,
`--patience`, `--decay-factor`, `--decay-patience`, `--ema`, `--schedule`,
`--distribute`, `--verbose`, `--tensorboard`, ...), each with its help line and default
in `--help`. See `zoo.recipe.config` and `zoo.recipe.recipe`.
"""

from zoo.recipes.config import RecipeConfig, build_parser, option, parse_config
from zoo.recipe.recipe import Recipe

__all__ = [
    "Recipe",
    "RecipeConfig",
    "build_parser",
    "option",
    "parse_config",
]
