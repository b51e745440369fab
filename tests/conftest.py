"""Shared fixtures: one random-weight model per session (building it takes seconds)."""

from __future__ import annotations

import os

import pytest

# Tests never reach the hub: CI has no network, and a test must not depend on it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def roberta():
    from helpers.workload import load_model

    return load_model("roberta-base")


@pytest.fixture(scope="session")
def small_batch(roberta):
    from helpers.workload import make_batch

    return make_batch(roberta, 4, 16)
