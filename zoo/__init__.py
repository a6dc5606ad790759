"""attention-zoo: classic NLP attention models as servable Keras 3 software."""

__version__ = "0.2.0"
