"""Each notebook's own rules, shared by its first code cell and the series runner."""

from pathlib import Path

import pytest
import torch

from helpers.errors import ParameterError
from helpers.notebook_checks import check_arguments, check_notebook, check_notebook_values
from helpers.records import number_of
from helpers.tools.series import notebook_defaults, notebooks

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = {number_of(path): notebook_defaults(path) for path in notebooks(ROOT)}


@pytest.mark.parametrize("number", DEFAULTS)
def test_every_notebook_passes_its_own_checks_at_its_defaults(number):
    assert check_notebook(number, DEFAULTS[number]).type in ("cpu", "cuda")


@pytest.mark.parametrize(
    "number, change, words",
    [
        ("08", {"size": "huge"}, "size='huge': use one of 'auto', 'full', 'tiny'"),
        ("08", {"new_tokens": 1}, "new_tokens=1 must be an integer >= 2"),
        ("08", {"sweep_batches": "[1, 8]"}, "-y 'sweep_batches: [1, 8]'"),
        (
            "08",
            {"model_name": "meta-llama/Llama-3.1-8B", "size": "tiny"},
            "no clear greedy step for 08's loop check; use 'meta-llama/Llama-3.2-1B'",
        ),
        ("09", {"num_requests": 0}, "num_requests=0 must be an integer >= 1"),
        ("09", {"seed": True}, "seed=True must be an integer >= 0"),
        ("09", {"prompt_median": 2000}, "prompt_median=2000 exceeds seq_len=1024"),
        ("09", {"output_median": 600}, "output_median=600 exceeds max_new_tokens=512"),
        ("09", {"spread": -1}, "spread=-1 must be a number >= 0"),
        ("09", {"arrival_load": 1.5}, "arrival_load=1.5 must be a number in (0, 1]"),
        ("10", {"gpus": 1}, "gpus=1: tensor parallelism needs at least 2 processes"),
        ("10", {"gpus": 3}, "gpus=3: it must divide the model's"),
        ("10", {"compile_mode": "fast"}, "compile_mode='fast'"),
        ("10", {"run_timeout_s": 0}, "run_timeout_s=0: give the seconds"),
        ("10", {"batch_sizes": []}, "batch_sizes=[] must be a list of integers >= 1"),
    ],
)
def test_a_notebook_only_value_is_refused_in_one_line(number, change, words):
    with pytest.raises(ParameterError) as refused:
        check_notebook_values(number, {**DEFAULTS[number], **change})
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_a_notebook_passes_its_globals_and_a_notebook_without_rules_passes():
    names = {**DEFAULTS["08"], "h": object(), "torch": object()}  # what globals() holds
    check_notebook_values("08", names)
    check_notebook_values("01", {})
    # 10 calls it after check_parameters, which turned device into a torch.device
    check_notebook_values("10", {**DEFAULTS["10"], "device": torch.device("cpu")})


def test_serving_checks_its_longest_request_at_the_size_it_will_run():
    values = {**DEFAULTS["09"], "device": "cpu"}  # "auto" on a CPU: tiny, as 09 runs it
    assert check_arguments("09", values)["seq_len"] == 64 + 16
    values["size"] = "full"
    arguments = check_arguments("09", values)
    assert (arguments["batch_size"], arguments["seq_len"]) == (16, 1024 + 512)
    assert arguments["kind"] == "decoder" and "threshold" not in arguments


def test_a_full_size_8b_and_a_tiny_1b_pass_08s_model_rule():
    check_notebook_values("08", {**DEFAULTS["08"], "size": "tiny"})  # the default, 1B
    full_8b = {**DEFAULTS["08"], "model_name": "meta-llama/Llama-3.1-8B", "size": "full"}
    check_notebook_values("08", full_8b)
