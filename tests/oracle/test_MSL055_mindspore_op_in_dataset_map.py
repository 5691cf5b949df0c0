"""MSL055: `Dataset.map` rejects nn Cells and ops Primitives when `map()` is called, with or without
multiprocessing; a functional op passed directly fails on the first row; transforms and Python functions run."""
from __future__ import annotations

import numpy as np
import pytest

MESSAGE = "Input operations should not contain network computing operator like in mindspore.nn or mindspore.ops"


def _dataset():
    import mindspore.dataset as ds

    return ds.NumpySlicesDataset({"x": np.arange(8, dtype=np.float32).reshape(8, 1) - 4}, shuffle=False)


def _rows(dataset):
    return [row["x"].tolist() for row in dataset.create_dict_iterator(output_numpy=True)]


def _operations(kind):
    from mindspore import nn, ops

    return {"ops": [ops.ReLU()], "nn": [nn.ReLU()], "bare": ops.ReLU()}[kind]


@pytest.mark.parametrize("multiprocessing", [False, True])
@pytest.mark.parametrize("kind", ["ops", "nn", "bare"])
def test_msl055_cells_and_primitives_raise_when_map_is_called(oracle, kind, multiprocessing):
    with pytest.raises(ValueError) as error:
        _dataset().map(operations=_operations(kind), input_columns=["x"], python_multiprocessing=multiprocessing,
                       num_parallel_workers=2)
    assert MESSAGE in str(error.value)


def test_msl055_a_functional_op_fails_on_the_first_row(oracle):
    from mindspore import ops

    pipeline = _dataset().map(operations=[ops.relu], input_columns=["x"])
    with pytest.raises(RuntimeError) as error:
        _rows(pipeline)
    assert "Failed calling ReLU with \"ReLU()(input=<class 'numpy.ndarray'>)\"" in str(error.value)


def relu_on_host(x):
    import mindspore as ms
    from mindspore import ops

    return ops.relu(ms.Tensor(x)).asnumpy()


def test_msl055_transforms_and_python_functions_run(oracle):
    import mindspore as ms
    import mindspore.dataset.transforms as transforms

    assert len(_rows(_dataset().map(operations=[transforms.TypeCast(ms.int32)], input_columns=["x"]))) == 8
    rows = _rows(_dataset().map(operations=[relu_on_host], input_columns=["x"]))
    assert rows == [[max(value, 0.0)] for value in range(-4, 4)]
