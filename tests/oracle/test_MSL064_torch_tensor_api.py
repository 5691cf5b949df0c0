"""MSL064: PyTorch tensor methods on MindSpore 2.10 tensors and Cells fail; `.shape` and `ops.stop_gradient` work."""
from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn, ops

TORCH_CALLS = """
import mindspore as ms
from mindspore import nn, ops

class Size(nn.Cell):
    def construct(self, x):
        return x.size(0)

class SizeAll(nn.Cell):
    def construct(self, x):
        return x.size()

class ShapeCalled(nn.Cell):
    def construct(self, x):
        return x.shape(0)

class Detach(nn.Cell):
    def construct(self, x):
        return x.detach()

class Cpu(nn.Cell):
    def construct(self, x):
        return x.cpu()

class Cuda(nn.Cell):
    def construct(self, x):
        return x.cuda()

class ToCuda(nn.Cell):
    def construct(self, x):
        return x.to("cuda")

class Backward(nn.Cell):
    def construct(self, x):
        x.backward()
        return x

class Fixed(nn.Cell):
    def construct(self, x):
        return ops.stop_gradient(x * 2) + x * x.shape[0] + x.to(ms.float32)

class ToCpu(nn.Cell):
    def construct(self, x):
        return x.to("cpu")
"""
FAILING = {"Size": ("ValueError", "TypeError"), "SizeAll": ("ValueError", "TypeError"),
           "ShapeCalled": ("ValueError", "TypeError"),
           "Detach": ("AttributeError", "AttributeError"), "Cpu": ("AttributeError", "AttributeError"),
           "Cuda": ("AttributeError", "AttributeError"), "ToCuda": ("ValueError", "ValueError"),
           "Backward": ("AttributeError", "AttributeError")}


@pytest.mark.parametrize("mode", ["lax", "strict", "pynative"])
def test_torch_methods_fail_in_graph_code(oracle, mode):
    cells = oracle.load(TORCH_CALLS)
    x = oracle.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for name, (graph_error, pynative_error) in FAILING.items():
        net = getattr(cells, name)()
        outcome = oracle.compile(mode, net, x) if mode != "pynative" else oracle.call(mode, net, x)
        assert not outcome.ok, f"{name} ran under {mode}"
        assert outcome.error_type == (pynative_error if mode == "pynative" else graph_error), (name, outcome.message)
    compiled_size = oracle.compile("lax", cells.Size(), x)
    assert "The object is not callable" in compiled_size.message
    fixed = oracle.call(mode, cells.Fixed(), x)
    assert fixed.ok, fixed.error
    assert np.allclose(fixed.value.asnumpy(), x.asnumpy() * 5)


def test_to_cpu_runs_on_the_host_but_not_in_a_cpu_graph(oracle):
    cells = oracle.load(TORCH_CALLS)
    x = oracle.tensor([1.0, 2.0])
    assert oracle.call("pynative", cells.ToCpu(), x).ok
    compiled = oracle.compile("lax", cells.ToCpu(), x)
    assert not compiled.ok and "Unsupported op [CopyToHost] on CPU" in compiled.message


def test_host_tensors_and_cells_lack_the_methods():
    t = ms.Tensor(np.ones((2, 3), np.float32))
    for method in ("cuda", "cpu", "detach", "backward"):
        assert not hasattr(t, method), method
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'cuda'"):
        t.cuda()
    assert t.size == 6
    with pytest.raises(TypeError, match="'int' object is not callable"):
        t.size()
    with pytest.raises(ValueError, match='Failed to convert the value "cuda"'):
        t.to("cuda")
    assert t.to("cpu").shape == (2, 3) and t.to(ms.float16).dtype == ms.float16
    for present in ("view", "permute", "item", "float"):
        assert hasattr(t, present), present
    net = nn.Dense(2, 2)
    assert not hasattr(net, "cuda") and not hasattr(net, "cpu")
    assert not hasattr(np.ones(2), "cuda") and not hasattr(np.ones(2), "cpu")  # "no tensor, array or Cell"
    with pytest.raises(ValueError, match='Failed to convert the value "cuda"'):
        net.to("cuda")


def test_cells_lack_pytorchs_module_methods_and_have_the_suggested_ones():
    from ms_lint.analysis.framework import TORCH_MODULE_METHODS

    net = nn.SequentialCell([nn.Dense(2, 2)])
    for method in TORCH_MODULE_METHODS:
        assert not hasattr(net, method), method
    with pytest.raises(AttributeError, match="has no attribute 'eval'"):
        net.eval()
    for present in ("set_train", "trainable_params", "get_parameters", "parameters_and_names", "cells",
                    "name_cells", "cells_and_names", "insert_child_to_cell"):
        assert hasattr(net, present), present
    for rnn in (nn.LSTM(2, 2), nn.GRU(2, 2), nn.RNN(2, 2)):  # xuance's `self.rnn.flatten_parameters()`
        assert not hasattr(rnn, "flatten_parameters")
    optimizer = nn.Adam(net.trainable_params())
    assert not hasattr(optimizer, "zero_grad") and hasattr(optimizer, "parameters")  # a ParameterTuple
    index = ops.range(0, 4, 1).long()
    assert index.dtype == ms.int64 and not hasattr(index, "cuda")  # `.long()` keeps a MindSpore tensor


def partly_stopped(v):
    return (ops.stop_gradient(v * 3) + v * v).sum()


def test_stop_gradient_cuts_the_gradient_like_detach():
    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    grad = ms.grad(partly_stopped)(x)
    assert np.allclose(grad.asnumpy(), 2 * x.asnumpy())


def test_a_loop_over_a_dataset_binds_tensors():
    """What `_dataset_values` assumes (wslnet, issue 19's third sample): tensors, unless `output_numpy=True`."""
    from mindspore.dataset import GeneratorDataset

    rows = [(np.ones((2,), np.float32), np.zeros((1,), np.float32)) for _ in range(2)]
    loader = GeneratorDataset(rows, column_names=["image", "mask"], shuffle=False).batch(1)
    for image, mask in loader:
        assert isinstance(image, ms.Tensor) and isinstance(mask, ms.Tensor) and not hasattr(image, "cuda")
    for row in loader.create_dict_iterator():
        assert isinstance(row["image"], ms.Tensor)
    for arrays in loader.create_tuple_iterator(output_numpy=True):
        assert isinstance(arrays[0], np.ndarray)


TORCH_ATTRIBUTES = """
import numpy as np
from mindspore import Parameter, Tensor, nn

class ReadsRequiresGrad(nn.Cell):
    def construct(self, x):
        if x.requires_grad:
            return x * 2
        return x

class ReadsIsCuda(nn.Cell):
    def construct(self, x):
        return x.is_cuda

class ReadsGrad(nn.Cell):
    def construct(self, x):
        return x.grad

class ReadsParameterFlag(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = Parameter(Tensor(np.ones(2, np.float32)))

    def construct(self, x):
        if self.w.requires_grad:
            return x * self.w
        return x
"""


@pytest.mark.parametrize("mode", ["lax", "pynative"])
def test_torch_autograd_attributes_fail_on_tensors(oracle, mode):
    from ms_lint.rules.torch_tensor_api import TORCH_ATTRIBUTES as NAMES

    cells = oracle.load(TORCH_ATTRIBUTES)
    x = oracle.tensor([1.0, 2.0])
    for name in ("ReadsRequiresGrad", "ReadsIsCuda", "ReadsGrad"):
        outcome = oracle.compile(mode, getattr(cells, name)(), x) if mode != "pynative" else \
            oracle.call(mode, getattr(cells, name)(), x)
        assert not outcome.ok and outcome.error_type == "AttributeError", (name, outcome.message)
    parameter_flag = oracle.compile(mode, cells.ReadsParameterFlag(), x) if mode != "pynative" else \
        oracle.call(mode, cells.ReadsParameterFlag(), x)
    # a Parameter has the flag: PyNative reads it, graph code refuses it
    assert parameter_flag.ok == (mode == "pynative"), parameter_flag.message
    t = ms.Tensor(np.ones(2, np.float32))
    assert not any(hasattr(t, name) for name in NAMES)
    assert not hasattr(ms.Parameter(t, name="delta"), "grad")  # an attack's `delta.grad` fails on a Parameter too
    assert ms.Parameter(t).requires_grad


def test_optimizers_and_schedules_lack_pytorchs_training_loop_methods():
    from mindspore.experimental import optim

    from ms_lint.rules.torch_tensor_api import OPTIMIZER_METHODS

    net = nn.Dense(2, 2)
    optimizers = (nn.Adam(net.trainable_params()), nn.SGD(net.trainable_params()),
                  nn.AdamWeightDecay(net.trainable_params()), optim.Adam(net.trainable_params()))
    for optimizer in optimizers:
        for method in (*OPTIMIZER_METHODS, "zero_grad"):
            assert not hasattr(optimizer, method), (type(optimizer).__name__, method)
    schedule = nn.ExponentialDecayLR(0.1, 0.9, 10)
    assert isinstance(schedule, nn.Cell) and not hasattr(schedule, "step")
    assert hasattr(ms.Model(net), "train")  # not a Cell: `runner.train(...)` is not reported
    loss = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizers[0])(
        ms.Tensor(np.ones((1, 2), np.float32)), ms.Tensor(np.ones((1, 2), np.float32)))
    assert isinstance(loss, ms.Tensor) and not hasattr(loss, "backward")
