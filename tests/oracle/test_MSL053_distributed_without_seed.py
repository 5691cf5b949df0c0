"""MSL053: what each rank's process does without a seed. Multi-rank `communication.init()` cannot run on this
one-CPU machine (it raises, as measured below), so the test measures the per-process facts the rule relies on:
fresh processes draw different initial weights unless something seeds the generator the initializers use.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROGRAM = """
import json, random, sys
import numpy as np
import mindspore as ms
from mindspore import nn

ms.set_device("CPU")
seed = sys.argv[1]
if seed == "ms":
    ms.set_seed(1)
elif seed == "numpy":
    np.random.seed(1)
elif seed == "random":
    random.seed(1)
print(json.dumps(nn.Dense(4, 3).weight.asnumpy().tolist()))
"""


def _weights(seed: str):
    """The initial weights a fresh process (one rank) builds."""
    run = subprocess.run([sys.executable, "-c", PROGRAM, seed], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_msl053_unseeded_processes_initialise_different_weights(oracle):
    assert _weights("none") != _weights("none")


@pytest.mark.parametrize("seed", ["ms", "numpy"])
def test_msl053_a_seed_makes_every_process_start_from_the_same_weights(oracle, seed):
    assert _weights(seed) == _weights(seed)


def test_msl053_pythons_random_seed_alone_does_not(oracle):
    assert _weights("random") != _weights("random")


def test_msl053_communication_init_cannot_run_on_one_cpu_host(oracle):
    program = ("import mindspore as ms\nms.set_device('CPU')\nfrom mindspore.communication import init\n"
               "try:\n    init()\nexcept RuntimeError as error:\n    print('RuntimeError:', str(error)[:120])\n")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert "RuntimeError: Maybe you are trying to call 'mindspore.communication.init()' without using 'mpirun'" \
        in run.stdout, run.stdout + run.stderr
