"""Shared fixtures: one random-weight model per session (building it takes seconds)."""

from __future__ import annotations

import os
import tempfile

import pytest

from helpers.paths import TEST_OUTPUT_ENV

# Tests never reach the hub: CI has no network, and a test must not depend on it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# nbval re-executes the published notebooks; their records and figures go here instead
# of over the committed GPU results (kernels inherit this environment).
os.environ.setdefault(TEST_OUTPUT_ENV, tempfile.mkdtemp(prefix="series-test-output-"))


@pytest.fixture(scope="session")
def roberta():
    from helpers.models import load_model

    return load_model("roberta-base")


@pytest.fixture(scope="session")
def small_batch(roberta):
    from helpers.models import make_batch

    return make_batch(roberta, 4, 16)
