"""A toy recipe written as the recipes are: separate two Gaussian blobs with a small
MLP. `main` takes two test-only hooks: `callbacks` (given to `fit`) and `export`
(called with the trained model; its result is the export folder)."""

import dataclasses

import numpy as np

from zoo.errors import DataError
from zoo.training import steps
from zoo.training.flags import RecipeConfig, option

NAME = "toy"
EXPORT_NAME = "toy_model"
TRAINING = dict(epochs=3, batch_size=16, learning_rate=1e-2)
DEMO_TRAINING = dict(epochs=2, patience=0)


@dataclasses.dataclass
class ToyConfig(RecipeConfig):
    units: int = option(8, "hidden units", demo=4, check="positive")
    activation: str = option("relu", "hidden activation", choices=("relu", "tanh"))
    fail: bool = option(False, "raise a DataError while loading the data")
    compiled: bool = option(True, "a bool on with --data, off on the demo", demo=False)


@dataclasses.dataclass
class ToyData:
    train: object
    validation: object
    test: tuple
    description: str = "toy blobs"
    fingerprint: str = "abc"


parse = steps.parser(ToyConfig, NAME, __doc__, TRAINING, DEMO_TRAINING)


def load_data(config):
    import tensorflow as tf

    if config.fail:
        raise DataError("expected 2 fields, found 3", path="toy.tsv", line=7)
    rng = np.random.default_rng(config.training.seed)
    x = np.concatenate([rng.normal(-2, 1, (64, 2)), rng.normal(2, 1, (64, 2))])
    y = np.repeat([0, 1], 64).astype("int32")
    ds = tf.data.Dataset.from_tensor_slices((x.astype("float32"), y))
    ds = ds.shuffle(128, seed=0).batch(config.training.batch_size)
    return ToyData(train=ds, validation=ds, test=(x, y))


def build_model(config, optimizer):
    import keras

    inputs = keras.Input((2,))
    hidden = keras.layers.Dense(config.units, activation=config.activation)(inputs)
    outputs = keras.layers.Dense(2, activation="softmax")(hidden)
    model = keras.Model(inputs, outputs)
    model.compile(
        optimizer=optimizer,
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
    )
    return model


def evaluate(model, data):
    x, y = data.test
    predicted = np.argmax(model.predict(x, verbose=0), axis=-1)
    return {"accuracy": float(np.mean(predicted == y))}


def main(argv=None, callbacks=None, export=None):
    config = parse(argv)
    with steps.recipe_run(NAME, config) as run:
        data = load_data(config)
        run.log(data.description)
        with run.strategy.scope():
            model = build_model(config, run.optimizer())
        run.fit(
            model,
            data.train,
            data.validation,
            callbacks=callbacks,
            data_fingerprint=data.fingerprint,
        )
        metrics = evaluate(model, data)
        run.write_metrics(data.description, metrics)
        version = None if export is None else export(model)
    return run.result(EXPORT_NAME, "accuracy", metrics["accuracy"], version)
