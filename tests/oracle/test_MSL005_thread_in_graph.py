"""MSL005: a thread started in construct runs once at compile time; locks and executors fail as context managers."""
from __future__ import annotations

import pytest

CELLS = """
import threading
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.pool import ThreadPool
from mindspore import nn

CALLS = []
GLOBAL_LOCK = threading.Lock()

def record(value=0):
    CALLS.append(value)
    return value * value

class StartThread(nn.Cell):
    def construct(self, x):
        worker = threading.Thread(target=record)
        worker.start()
        worker.join()
        return x * 2

class PoolMap(nn.Cell):
    def construct(self, x):
        squares = ThreadPool(2).map(record, [1, 2])
        return x * squares[1]

class WithLock(nn.Cell):
    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def construct(self, x):
        with self.lock:
            y = x * 2
        return y

class WithGlobalLock(nn.Cell):
    def construct(self, x):
        with GLOBAL_LOCK:
            y = x * 2
        return y

class WithExecutor(nn.Cell):
    def construct(self, x):
        with ThreadPoolExecutor(2) as executor:
            squares = list(executor.map(record, [1, 2]))
        return x * squares[1]
"""


@pytest.mark.parametrize("mode, expected", [("lax", 1), ("strict", 1), ("pynative", 2)])
def test_msl005_thread_side_effect_happens_once_in_graph_mode(oracle, mode, expected):
    cells = oracle.load(CELLS)
    net, x = cells.StartThread(), oracle.tensor([1.0, 2.0])
    assert oracle.call(mode, lambda: (net(x), net(x))).ok
    assert len(cells.CALLS) == expected


@pytest.mark.parametrize("mode, expected", [("lax", 2), ("strict", 2), ("pynative", 4)])
def test_msl005_pool_map_runs_once_at_compile_time(oracle, mode, expected):
    cells = oracle.load(CELLS)
    net, x = cells.PoolMap(), oracle.tensor([1.0, 2.0])
    outcome = oracle.call(mode, lambda: (net(x), net(x)))
    assert outcome.ok and outcome.value[1].asnumpy().tolist() == [4.0, 8.0]
    assert len(cells.CALLS) == expected  # two items mapped per run


@pytest.mark.parametrize("mode", ["lax", "strict"])
@pytest.mark.parametrize("cell_name", ["WithLock", "WithGlobalLock", "WithExecutor"])
def test_msl005_lock_and_executor_context_managers_fail_to_compile(oracle, mode, cell_name):
    cells = oracle.load(CELLS)
    outcome = oracle.compile(mode, getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0]))
    assert not outcome.ok and outcome.error_type == "TypeError"
    assert "Only support jit_class instance" in outcome.message
    assert oracle.call("pynative", getattr(cells, cell_name)(), oracle.tensor([1.0, 2.0])).ok
