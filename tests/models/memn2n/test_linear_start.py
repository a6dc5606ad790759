from zoo.models.memn2n import MemN2N
from zoo.models.memn2n.linear_start import LinearStart

V, M, J = 15, 6, 4


def test_linear_start_callback_switches_when_validation_loss_stalls():
    model = MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True)
    callback = LinearStart(model.memory)
    callback.set_model(model)
    for epoch, loss in enumerate([3.0, 2.0, 1.5]):
        callback.on_epoch_end(epoch, {"val_loss": loss})
        assert model.memory.linear_start_enabled
    callback.on_epoch_end(3, {"val_loss": 1.6})
    assert not model.memory.linear_start_enabled and callback.switched_at == 4
    callback.on_epoch_end(4, {"val_loss": 9.0})  # stays off
    assert not model.memory.linear_start_enabled


def test_linear_start_ends_at_max_epochs_and_ignores_missing_monitor():
    late = LinearStart(
        MemN2N(V, M, J, embedding_dim=4, hops=1, linear_start=True).memory,
        max_epochs=2,
    )
    late.on_epoch_end(0, {"loss": 1.0})  # no val_loss: nothing happens
    assert late.layer.linear_start_enabled and late.switched_at is None
    late.on_epoch_end(1, {"val_loss": 1.0})
    assert not late.layer.linear_start_enabled and late.switched_at == 2
