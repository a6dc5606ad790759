"""`ServerClient`: what the clients of a running TF Serving share, whatever the protocol."""

from zoo.errors import ConfigError

DEFAULT_SIGNATURE = "serving_default"


class ServerClient:
    """Base of `GrpcClient` and `RestClient`.

    A subclass sets `address` and `model`, implements `signature_specs()` (`{signature:
    {"inputs": {name: dtype}, "outputs": {name: dtype}}}` from the server's model
    metadata) and `predict(inputs, signature)`, and may override `close()`.
    """

    address = None
    model = None

    def signature_specs(self):
        raise NotImplementedError

    def signature_spec(self, signature=DEFAULT_SIGNATURE):
        """The inputs and outputs of `signature`; a `ConfigError` naming the served
        signatures when the model has no such signature."""
        specs = self.signature_specs()
        if signature not in specs:
            raise ConfigError(
                f"model {self.model!r} at {self.address} has no signature "
                f"{signature!r}; its signatures: {', '.join(sorted(specs))}"
            )
        return specs[signature]

    def close(self):
        """Releases the connection (nothing to release by default)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
