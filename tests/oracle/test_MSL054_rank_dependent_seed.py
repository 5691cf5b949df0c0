"""MSL054: the global seed decides the initial weights, so a seed offset by the rank gives every rank another
model; `set_seed` also seeds numpy and `random`, and `ds.config.set_seed` reseeds numpy behind it."""
from __future__ import annotations

import random

import numpy as np
import pytest


def _dense_weights():
    from mindspore import nn

    return nn.Dense(4, 3).weight.asnumpy()


def _rank_weights(seed_of_rank):
    """The weights ranks 0 and 1 build when each seeds with `seed_of_rank(rank)` (one process plays both)."""
    import mindspore as ms

    weights = []
    for rank in (0, 1):
        ms.set_seed(seed_of_rank(rank))
        weights.append(_dense_weights())
    return weights


def test_msl054_a_rank_dependent_seed_gives_each_rank_other_weights(oracle):
    first, second = _rank_weights(lambda rank: 7 + rank)
    assert not np.array_equal(first, second)


def test_msl054_the_same_seed_gives_every_rank_the_same_weights(oracle):
    first, second = _rank_weights(lambda rank: 7)
    assert np.array_equal(first, second)


def test_msl054_set_seed_seeds_numpy_and_random(oracle):
    import mindspore as ms

    ms.set_seed(1)
    seeded = (np.random.rand(3).tolist(), random.random())
    np.random.seed(1)
    random.seed(1)
    assert seeded == (np.random.rand(3).tolist(), random.random())


@pytest.mark.parametrize("dataset_seed_first, equal", [(True, True), (False, False)])
def test_msl054_a_rank_offset_dataset_seed_after_set_seed_changes_the_weights(oracle, dataset_seed_first, equal):
    import mindspore as ms
    import mindspore.dataset as ds

    weights = []
    for rank in (0, 1):
        if dataset_seed_first:
            ds.config.set_seed(1 + rank)
            ms.set_seed(1)
        else:
            ms.set_seed(1)
            ds.config.set_seed(1 + rank)  # reseeds numpy, which the initializers draw from
        weights.append(_dense_weights())
    assert np.array_equal(*weights) is equal
