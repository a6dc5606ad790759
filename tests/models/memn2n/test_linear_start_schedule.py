import math

import keras
import numpy as np
import pytest

from zoo.models.memn2n import MemN2N, MemN2NQuestionAnswerer
from zoo.models.memn2n.linear_start import LinearStart, LinearStartSchedule

V, M, J = 15, 6, 4


def test_step_decay_schedule():
    schedule = LinearStartSchedule(0.01, every=25)  # without linear start
    assert [schedule.rate(e) for e in (0, 24, 25, 50, 99)] == [
        0.01,
        0.01,
        0.005,
        0.0025,
        0.00125,
    ]
    with pytest.raises(ValueError, match="every=0"):
        LinearStartSchedule(0.01, every=0)


def test_linear_start_schedule_holds_then_restarts_the_step_decay():
    model = MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True)
    trainer = MemN2NQuestionAnswerer(model)
    linear = LinearStart(model.memory, patience=math.inf, max_epochs=3)
    schedule = LinearStartSchedule(0.005, 2, linear=linear)
    for cb in (linear, schedule):
        cb.set_model(trainer)
    for epoch in range(8):
        schedule.on_epoch_begin(epoch)
        linear.on_epoch_end(epoch, {"val_loss": 1.0 / (epoch + 1)})  # improving
    # LS for exactly 3 epochs at 0.005, then 0.005 halved every 2 epochs from there
    assert linear.switched_at == 3
    assert schedule.rates == [0.005] * 3 + [0.005, 0.005, 0.0025, 0.0025, 0.00125]
    np.testing.assert_allclose(
        float(keras.ops.convert_to_numpy(trainer.optimizer.learning_rate)), 0.00125
    )
    # a run resumed after the switch (switched_at unknown) uses fallback_start
    model.memory.set_linear_start(False)
    resumed = LinearStartSchedule(
        0.005,
        2,
        linear=LinearStart(model.memory),
        fallback_start=3,
    )
    assert resumed.rate(5) == 0.0025
