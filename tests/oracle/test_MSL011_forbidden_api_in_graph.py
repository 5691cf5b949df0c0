"""MSL011: the APIs 2.10 lists as forbidden in graph code fail to compile at both levels; PyNative runs them."""
from __future__ import annotations

import importlib

import pytest

from ms_lint.engine import Linter
from ms_lint.rules import forbidden_api_in_graph as rule
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

# (name, construct body, the compiler's message, or None where GRAPH_MODE compiles it)
CASES = [
    ("GetContext", "if ms.get_context('device_target') == 'Ascend':\n    x = x * 2\nreturn x",
     "the method or function 'mindspore.context.get_context' is not supported in 'construct'"),
    ("SetAutoParallel", "context.set_auto_parallel_context(gradients_mean=True)\nreturn x",
     "'mindspore.context.set_auto_parallel_context' is not supported"),
    ("Logger", "logger.warning('forward')\nreturn x", "'mindspore.log.warning' is not supported"),
    ("LoggerInTensorBranch", "if x.sum() > 100:\n    logger.info('big')\nreturn x",
     "'mindspore.log.info' is not supported"),
    ("Initializer", "w = XavierUniform()\nreturn x",
     "the class 'mindspore.common.initializer.XavierUniform' is not supported"),
    ("AssignValue", "x.assign_value(x + 1)\nreturn x", "the 'Tensor' object's method 'assign_value' is not supported"),
    ("SetConstArg", "x.set_const_arg(True)\nreturn x", "method 'set_const_arg' is not supported"),
    ("ForwardHook", "self.dense.register_forward_hook(hook)\nreturn x",
     "'mindspore.nn.cell.Cell.register_forward_hook' is not supported"),
    ("StateDict", "d = self.state_dict()\nreturn x", "'mindspore.nn.cell.Cell.state_dict' is not supported"),
    ("CellTo", "self.to(ms.float16)\nreturn x", "'mindspore.nn.cell.Cell.to' is not supported"),
    ("GetSubCell", "c = self.get_sub_cell('dense')\nreturn x",
     "'mindspore.nn.cell.Cell.get_sub_cell' is not supported"),
    ("SoftShrink", "return ops.soft_shrink(x)", "'mindspore.log.warning' is not supported"),
    ("DtypeToNptype", "t = ms.dtype_to_nptype(ms.float32)\nreturn x", "'mindspore.log.warning' is not supported"),
    ("PythonLogging", "logging.info('forward')\nreturn x", None),
    ("ParallelModeEnum", "if ParallelMode.DATA_PARALLEL == 'data_parallel':\n    x = x + 1\nreturn x", None),
    ("TensorTo", "return x.to(ms.float16)", None),
    ("ContextInInit", "if self.on_ascend:\n    x = x * 2\nreturn x", None),
]
# STRICT refuses the Tensor methods one step earlier, when it looks the attribute up
STRICT_ATTRIBUTE_ERRORS = {"AssignValue": "In JIT strict mode, cannot get attributes assign_value",
                           "SetConstArg": "In JIT strict mode, cannot get attributes set_const_arg"}
TEMPLATE = """
import logging

import mindspore as ms
from mindspore import context, nn, ops
from mindspore import log as logger
from mindspore.common.initializer import XavierUniform
from mindspore.context import ParallelMode


def hook(cell, inputs, output):
    return None


class {name}(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(2, 2)
        self.on_ascend = ms.get_context("device_target") == "Ascend"

    def construct(self, x):
{body}
"""


def _source(name: str, body: str) -> str:
    return TEMPLATE.format(name=name, body="\n".join("        " + line for line in body.splitlines()))


@pytest.mark.parametrize("name, body, message", CASES, ids=[case[0] for case in CASES])
def test_msl011_fires_exactly_where_graph_mode_refuses_the_api(oracle, name, body, message):
    source = _source(name, body)
    x = oracle.tensor([[1.0, 2.0]])
    for mode in ("lax", "strict"):
        outcome = oracle.call(mode, getattr(oracle.load(source), name)(), x)
        if message and mode == "strict" and name in STRICT_ATTRIBUTE_ERRORS:
            assert outcome.error_type == "AttributeError", (mode, outcome.message)
            assert STRICT_ATTRIBUTE_ERRORS[name] in outcome.message, (mode, outcome.message)
        elif message:
            assert not outcome.ok and "Failed to compile in GRAPH_MODE because" in outcome.message, (mode, outcome)
            assert message in outcome.message, (mode, outcome.message)
        else:
            assert outcome.ok, (mode, outcome.message)
    if name != "CellTo":  # Cell.to in PyNative casts the Cell; the others run as written
        assert oracle.call("pynative", getattr(oracle.load(source), name)(), x).ok
    found = Linter(Settings(select=("MSL011",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == (["error"] if message else []), [d.message for d in found]


def test_msl011_a_branch_on_a_constant_flag_is_not_compiled(oracle):
    """The warning case: `if self.verbose:` with verbose False is folded, so the call there is never resolved."""
    source = TEMPLATE.format(name="Verbose", body="        if self.verbose:\n            logger.info('v')\n"
                                                   "        return x").replace(
        "self.dense = nn.Dense(2, 2)", "self.verbose = False")
    assert oracle.call("lax", oracle.load(source).Verbose(), oracle.tensor([[1.0, 2.0]])).ok
    found = Linter(Settings(select=("MSL011",))).lint_source(
        SourceFile(path="cell.py", text=source, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ["warning"]


def test_msl011_lists_are_the_wheels_own():
    """The rule's lists are 2.10's forbidden modules and registered methods, as the wheel defines them."""
    forbidden = importlib.import_module("mindspore.graph._utils.check_jit_forbidden_api")
    importlib.import_module("mindspore.nn")
    assert set(forbidden.get_jit_forbidden_module()) == set(rule.FORBIDDEN_MODULES)
    for module_name, names in rule.FORBIDDEN_MODULES.items():
        module = importlib.import_module(module_name)
        own = {name for name in dir(module) if not name.startswith("_")
               and getattr(getattr(module, name), "__module__", None) == module_name}
        assert names == own - {"initializer", "ParallelMode", "K_CONTEXT"}, module_name
    mindspore = importlib.import_module("mindspore")
    top = {name for name in dir(mindspore)
           if getattr(getattr(mindspore, name), "__module__", None) in rule.FORBIDDEN_MODULES}
    assert rule.TOP_LEVEL == top - {"ParallelMode"}
    methods = {entry.rsplit(".", 2)[-2:][0] + "." + entry.rsplit(".", 1)[-1]
               for entry in forbidden.get_jit_forbidden_method()}
    cell_methods = {m.split(".")[1] for m in methods if m.startswith("Cell.")}
    # MSL010 reports the parameter walks; MSL008 `Parameter.set_data`; hook handles' `remove` has no telling name
    assert cell_methods - {"trainable_params", "untrainable_params", "get_parameters", "_run_forward_hook",
                           "_run_forward_pre_hook"} == rule.CELL_METHODS | rule.SELF_ONLY_CELL_METHODS
    assert {m.split(".")[1] for m in methods if m.startswith("Tensor.")} == rule.TENSOR_METHODS


HELPER_BEHIND_A_FLAG = """
import mindspore as ms
from mindspore import nn


class Rotary(nn.Cell):
    def __init__(self, rope_type):
        super().__init__()
        self.rope_type = rope_type

    def _update(self, x):
        if x.max() > 1:
            self.register_buffer("inv_freq", x)

    def construct(self, x):
        if "dynamic" in self.rope_type:
            self._update(x)
        return x
"""


def test_msl011_a_helper_called_only_behind_a_flag_compiles_while_the_flag_keeps_it_out(oracle):
    module = oracle.load(HELPER_BEHIND_A_FLAG)
    x = oracle.tensor([[1.0, 2.0]])
    assert oracle.call("lax", module.Rotary("default"), x).ok
    outcome = oracle.call("lax", module.Rotary("dynamic"), x)
    assert not outcome.ok and "'mindspore.nn.cell.Cell.register_buffer' is not supported" in outcome.message
    found = Linter(Settings(select=("MSL011",))).lint_source(
        SourceFile(path="cell.py", text=HELPER_BEHIND_A_FLAG, module_name="cell")).diagnostics
    assert [d.severity for d in found] == ["warning"]


def test_msl011_logging_functions_are_the_wheels_own():
    """The public functions of these namespaces whose body starts by logging through `mindspore.log`."""
    import ast
    import inspect
    import textwrap
    import types

    found = {}
    for namespace in ("mindspore", "mindspore.ops", "mindspore.ops.functional", "mindspore.common.dtype",
                      "mindspore.numpy", "mindspore.mint", "mindspore.nn", "mindspore.amp"):
        module = importlib.import_module(namespace)
        for name in dir(module):
            function = getattr(module, name, None)
            if name.startswith("_") or not isinstance(function, types.FunctionType):
                continue
            try:
                tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
            except (OSError, TypeError, SyntaxError):
                continue
            body = [s for s in tree.body[0].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                   and getattr(s.value.func.value, "id", "") == "logger" for s in body[:3]):
                found[f"{namespace}.{name}"] = f"{function.__module__}.{function.__qualname__}"
    assert found == rule.LOGGING_FUNCTIONS
