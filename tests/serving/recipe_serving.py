"""A recipe's export answers the same through `zoo predict`, locally and from a running
TF Serving over gRPC and REST (`tests.serving.fake_serving.serve_export` stands in for
tensorflow_model_server on 127.0.0.1). Each recipe's test module calls
`check_local_grpc_and_rest_agree` on the export its demo run already made."""

import contextlib
import io
import json
import math

from zoo import cli


def _zoo_predict(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(["predict", *args])
    assert status in (0, None), status
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _assert_close(a, b, path="output"):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), path
        for key in a:
            _assert_close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _assert_close(x, y, f"{path}[{i}]")
    elif isinstance(a, float):
        assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6), (path, a, b)
    else:
        assert a == b, (path, a, b)


def check_local_grpc_and_rest_agree(version_dir, model, requests, attention=True):
    """`zoo predict` on `version_dir` and on a served copy (gRPC, REST) agree.

    Args:
        version_dir: the export's version folder (`.../NAME/VERSION`).
        model: the model name TF Serving serves it under (the export's `NAME`).
        requests: `{signature: zoo predict arguments}`.
        attention: whether `serving_default`'s rows hold an attention output too
            (every other signature's rows must).
    """
    from tests.serving.fake_serving import serve_export

    with serve_export(version_dir) as served:
        assert served.model == model
        for signature, args in requests.items():
            local = _zoo_predict(version_dir, "-s", signature, *args)
            rows = 1 if "--question" in args else len(args)
            assert len(local) == rows
            if attention or signature != "serving_default":
                assert all(any(k.endswith("attention") for k in r) for r in local)
            for protocol in ([], ["--rest"]):
                address = served.rest if protocol else served.grpc
                remote = _zoo_predict(
                    "--server", address, "--model", served.model, *protocol,
                    "-s", signature, *args,
                )  # fmt: skip
                _assert_close(local, remote, f"{model}/{signature}{protocol}")
