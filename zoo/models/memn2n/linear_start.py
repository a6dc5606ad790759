"""`LinearStart`: the callback that ends MemN2N's linear start (LS)."""

import math

import keras


class LinearStart(keras.callbacks.Callback):
    """Linear start (LS): restores the attention softmax when `monitor` stalls.

    Training starts with linear attention (`MemoryNetwork(linear_start=True)`); at
    the end of the first epoch whose `monitor` (validation loss) did not improve on
    the best so far by more than `min_delta` (after `patience` such epochs), the
    callback switches the softmax back on (`layer.set_linear_start(False)`). The
    switch is a variable read by the compiled graph: nothing is rebuilt or
    recompiled.

    Args:
        layer: the `MemoryNetwork` (e.g. `model.memory`).
        monitor: the logged quantity (default `"val_loss"`).
        patience: epochs without improvement before the switch (1 = at the first).
        min_delta: the smallest change counted as an improvement.
        max_epochs: optional, switch at this epoch at the latest.
    """

    def __init__(
        self, layer, monitor="val_loss", patience=1, min_delta=0.0, max_epochs=None
    ):
        super().__init__()
        self.layer = layer
        self.monitor = monitor
        self.patience = patience
        self.min_delta = min_delta
        self.max_epochs = max_epochs
        self.best = math.inf
        self.wait = 0
        self.switched_at = None

    def on_epoch_end(self, epoch, logs=None):
        if not self.layer.linear_start_enabled:
            return
        value = (logs or {}).get(self.monitor)
        if value is None:
            return
        if value < self.best - self.min_delta:
            self.best, self.wait = value, 0
        else:
            self.wait += 1
        late = self.max_epochs is not None and epoch + 1 >= self.max_epochs
        if self.wait >= self.patience or late:
            self.layer.set_linear_start(False)
            self.switched_at = epoch + 1
