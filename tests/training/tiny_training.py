"""A tiny training run driven by zoo.training, executed in child processes by the tests.

Usage: python tiny_training.py RUN_DIR OUT_JSON [--kill-epoch N] [--distribute X]
       [--logical-cpus N] [--epochs N]
"""

import argparse
import json
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_json")
    parser.add_argument("--kill-epoch", type=int, default=-1)
    parser.add_argument("--logical-cpus", type=int, default=0)
    from zoo.training import TrainingConfig, add_training_args

    add_training_args(parser, epochs=5, batch_size=16, learning_rate=0.05)
    args = parser.parse_args()

    import tensorflow as tf

    if args.logical_cpus:
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * args.logical_cpus
        )
    import keras
    import numpy as np

    from zoo.training import fit, get_strategy, set_seed

    cfg = TrainingConfig.from_args(args, tensorboard=False)
    strategy = get_strategy(cfg.distribute)
    set_seed(cfg.seed)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], "float32"))[:, None]
    train = tf.data.Dataset.from_tensor_slices((x, y)).batch(cfg.batch_size)
    val = tf.data.Dataset.from_tensor_slices((x[:16], y[:16])).batch(cfg.batch_size)

    with strategy.scope():
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        model.compile(keras.optimizers.SGD(cfg.learning_rate), "mse")

    seen_path = args.out_json + ".epochs"
    marker = args.out_json + ".killed"

    class Recorder(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch
            with open(seen_path, "a") as f:
                f.write(f"{epoch}\n")

        def on_train_batch_end(self, batch, logs=None):
            if (
                self.epoch == args.kill_epoch
                and batch == 1
                and not os.path.exists(marker)
            ):
                open(marker, "w").close()
                sys.stdout.flush()
                os._exit(3)  # simulates a kill in the middle of an epoch

    history = fit(model, train, val, cfg, callbacks=[Recorder()], verbose=0)
    with open(args.out_json, "w") as f:
        json.dump(
            {
                "replicas": strategy.num_replicas_in_sync,
                "epochs": history.epoch,
                "loss": history.history["loss"],
                "weights": [float(v) for v in np.ravel(model.layers[0].kernel.numpy())],
            },
            f,
        )


if __name__ == "__main__":
    main()
