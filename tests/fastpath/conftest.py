"""Every fast-path test starts from the default switch (on), whatever the
environment, and leaves it as it found it."""

import pytest


@pytest.fixture(autouse=True)
def _default_switch(monkeypatch):
    from zoo.fastpath import switch

    monkeypatch.setattr(switch, "_flag", None)
    monkeypatch.delenv(switch.ENV_VAR, raising=False)
