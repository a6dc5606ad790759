"""Compiling a classifier's training view."""


def compile_classifier(model, optimizer, jit_compile="auto"):
    """Compiles `model.training_model()` for integer labels and returns it.

    Loss: sparse categorical cross-entropy on the probabilities (plus the losses the
    model adds itself, such as a self-attention penalty); metric: accuracy.

    Args:
        model: a classifier with `training_model()` (the single-output view).
        optimizer: a Keras optimizer.
        jit_compile: `keras.Model.compile`'s (`False` for models whose batches vary
            in shape, which XLA would recompile for every new shape).
    """
    trainer = model.training_model()
    trainer.compile(
        optimizer=optimizer,
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return trainer
