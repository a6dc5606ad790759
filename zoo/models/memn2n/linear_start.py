"""Linear start and the paper's learning-rate schedule: `LinearStart`,
`LinearStartSchedule`.

`LinearStart` ends MemN2N's linear start (LS); `LinearStartSchedule` halves the rate
every 25 epochs (15 in joint training), holds it constant during linear start and
restarts the decay when the softmax comes back, as the authors' code does.
"""

import math

import keras


class LinearStart(keras.callbacks.Callback):
    """Linear start (LS): restores the attention softmax when `monitor` stalls.

    Training starts with linear attention (`MemoryNetwork(linear_start=True)`); at
    the end of the first epoch whose `monitor` (validation loss) did not improve on
    the best so far (after `patience` such epochs), the callback switches the
    softmax back on (`layer.set_linear_start(False)`). The switch is a variable read
    by the compiled graph: nothing is rebuilt or recompiled.

    Args:
        layer: the `MemoryNetwork` (e.g. `model.memory`).
        monitor: the logged quantity (default `"val_loss"`).
        patience: epochs without improvement before the switch (1 = at the first).
        max_epochs: optional, switch at this epoch at the latest.
    """

    def __init__(self, layer, monitor="val_loss", patience=1, max_epochs=None):
        super().__init__()
        self.layer = layer
        self.monitor = monitor
        self.patience = patience
        self.max_epochs = max_epochs
        self.best = math.inf
        self.wait = 0
        self.switched_at = None

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if not self.layer.linear_start_enabled or value is None:
            return
        if value < self.best:
            self.best, self.wait = value, 0
        else:
            self.wait += 1
        late = self.max_epochs is not None and epoch + 1 >= self.max_epochs
        if self.wait >= self.patience or late:
            self.layer.set_linear_start(False)
            self.switched_at = epoch + 1


class LinearStartSchedule(keras.callbacks.Callback):
    """The paper's step schedule around linear start, as in the authors' code.

    The paper halves the rate every `every` epochs (25 per task, 15 jointly). While
    attention is linear the rate stays at `learning_rate`; from the first softmax
    epoch `s` on it is `learning_rate * 0.5 ** ((epoch - s) // every)`, so the
    schedule restarts when training "recommences" with the softmax. Without linear
    start (`linear` is None) it is `learning_rate * 0.5 ** (epoch // every)` from
    epoch 0.

    Args:
        learning_rate: the initial rate (0.005 with linear start in the paper).
        every: epochs between halvings after linear start.
        linear: the `LinearStart` callback, or None. Its `layer` is read for the
            current switch state (so a resumed run whose switch is already off uses
            `fallback_start`) and its `switched_at` for the first softmax epoch.
        fallback_start: first softmax epoch to assume when the switch is off but
            `linear.switched_at` is unknown (a run resumed after the switch).
    """

    def __init__(self, learning_rate, every, linear=None, fallback_start=0):
        super().__init__()
        if every <= 0:
            raise ValueError(f"`every` must be positive. Received: every={every!r}")
        self.learning_rate = float(learning_rate)
        self.every = int(every)
        self.linear = linear
        self.fallback_start = int(fallback_start)
        self.rates = []

    def rate(self, epoch):
        """The rate for 0-based `epoch`."""
        if self.linear is not None:
            if self.linear.layer.linear_start_enabled:
                return self.learning_rate
            switched = self.linear.switched_at
            epoch -= switched if switched is not None else self.fallback_start
        return float(self.learning_rate * 0.5 ** (max(epoch, 0) // self.every))

    def on_epoch_begin(self, epoch, logs=None):
        rate = self.rate(epoch)
        self.model.optimizer.learning_rate.assign(rate)
        self.rates.append(rate)
