"""MSL060-MSL066 facts a single fixture cannot hold: module-wide criteria (a PyTorch header, MindTorch, a
PyTorch-only module), version guards, and the exact text of computed fixes."""
from __future__ import annotations

import sys
import textwrap

import pytest

from ms_lint.engine import Linter
from ms_lint.fixing.apply import apply_fixes
from ms_lint.fixing.edits import complement
from ms_lint.settings import Settings
from ms_lint.source import SourceFile

LINTER = Linter(Settings(select=("MSL06",)))


def lint(text: str, path: str = "module.py"):
    return LINTER.lint_source(SourceFile(path=path, text=textwrap.dedent(text), module_name="module")).diagnostics


def codes(text: str):
    return sorted((d.row, d.code) for d in lint(text))


@pytest.mark.parametrize("literal, expected", [("0.9", "0.1"), ("0.1", "0.9"), ("0.97", "0.03"), ("1", "0.0"),
                                               ("0.999", "0.001"), (".9", "0.1"), ("9e-1", "0.1")])
def test_complement_prints_the_value_a_person_writes(literal, expected):
    assert complement(literal) == expected


def test_a_pytorch_origin_header_makes_a_module_ported():
    body = textwrap.dedent("""
        from mindspore import nn

        class Stem(nn.Cell):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
    """)
    assert codes('"""Adapted from https://github.com/pytorch/vision/blob/main/resnet.py"""' + body) == [
        (7, "MSL061")]
    assert codes("# Ported from torchvision's ResNet." + body) == [(7, "MSL061")]
    assert codes('"""A ResNet stem (we refer to the PyTorch docs for shapes)."""' + body) == []
    assert codes(body) == []


def test_a_pytorch_mention_after_the_header_does_not_count():
    assert codes("""
        from mindspore import nn

        class Stem(nn.Cell):
            def __init__(self):
                super().__init__()
                # adapted from the PyTorch version
                self.conv = nn.Conv2d(3, 8, 3)
    """) == []


def test_mindtorch_modules_keep_pytorch_semantics():
    assert codes("""
        from mindtorch.tools import mstorch_enable
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3, padding=1)
                self.drop = nn.Dropout(0.1)
                self.bn = nn.BatchNorm2d(8, momentum=0.1)

            def forward(self, x):
                return self.drop(self.conv(x)).size(0), x.detach().cuda()
    """) == []


def test_torch_autograd_function_only_in_mindspore_code():
    pytorch_only = """
        import torch

        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x
    """
    assert codes(pytorch_only) == []
    assert codes("import mindspore" + textwrap.dedent(pytorch_only)) == [(4, "MSL066")]


def test_version_guarded_compatibility_code_is_silent():
    assert codes("""
        import mindspore as ms
        from mindspore import nn

        def get_dropout(rate):
            if is_version_ge(ms.__version__, "1.11.0"):
                return nn.Dropout(p=rate)
            return nn.Dropout(keep_prob=1 - rate) if ms.__version__ < "1.11" else nn.Dropout(p=rate)

        if hasattr(ms, "ms_function"):
            from mindspore import ms_function
            step = ms.ms_function(get_dropout)
    """) == []


def test_an_ms_function_import_without_a_fallback_is_reported_with_its_uses():
    assert codes("""
        try:
            from mindspore import ms_function
        except ImportError:
            ms_function = None

        @ms_function
        def step(x):
            return x
    """) == [(3, "MSL065"), (7, "MSL065")]


@pytest.mark.skipif(sys.version_info < (3, 10), reason="import aliases carry positions from Python 3.10")
def test_jit_already_imported_removes_the_ms_function_alias():
    text = "from mindspore import jit, ms_function\n\n@ms_function\ndef f(x):\n    return x\n"
    result = apply_fixes(text, lint(text))
    assert result.text == "from mindspore import jit\n\n@jit\ndef f(x):\n    return x\n"


def test_size_fix_keeps_parentheses_and_detach_fix_imports_ops():
    text = textwrap.dedent("""
        import mindspore

        def shapes(a: mindspore.Tensor, b: mindspore.Tensor):
            return (a + b).size(-1), (a * 2).detach()
    """)
    result = apply_fixes(text, lint(text))
    assert "return (a + b).shape[-1], mindspore.ops.stop_gradient(a * 2)" in result.text
    text = "from mindspore import Tensor\n\ndef cut(a: Tensor):\n    return a.detach()\n"
    assert apply_fixes(text, lint(text)).text == (
        "from mindspore import Tensor, ops\n\ndef cut(a: Tensor):\n    return ops.stop_gradient(a)\n")


def test_host_receivers_must_be_provably_mindspore():
    assert codes("""
        import mindspore as ms
        from mindspore import ops

        def run(model, batch, flag):
            model.cuda()
            batch.detach()
            value = ops.ones((2, 2), ms.float32) if flag else batch
            value.detach()
            for item in [ops.ones((2,), ms.float32)]:
                item.detach()
            known = ops.ones((2, 2), ms.float32)
            return known.detach()
    """) == [(6, "MSL064"), (13, "MSL064")]  # (`.cuda()`, like `.cpu()`, nothing in a MindSpore-only module has)


def test_conv_padding_messages_name_the_mode_and_fix_replaces_it():
    text = "from mindspore import nn\nconv = nn.Conv2d(3, 8, 3, pad_mode='valid', padding=(1, 1, 1, 1))\n"
    (diagnostic,) = lint(text)
    assert 'pad_mode "valid"' in diagnostic.message
    assert apply_fixes(text, [diagnostic]).text.endswith("pad_mode=\"pad\", padding=(1, 1, 1, 1))\n")


def test_a_pytorch_device_handed_to_mindspore():
    assert codes("""
        import torch
        import mindspore as ms
        from mindspore import ops

        def build():
            gpu = torch.device("cuda")
            ones = ops.ones((2, 2), ms.float32, device=torch.device("cuda"))
            ones.to(gpu)
            ones.to(torch.device("cuda:0"))
            ones.to("Ascend")
            return torch.zeros(2, device=torch.device("cuda"))
    """) == [(8, "MSL064"), (8, "MSL067"), (9, "MSL064"), (10, "MSL064")]  # 2.10's ops.ones takes no device=


def test_msl062_is_an_error_only_where_the_argument_reads_as_a_pytorch_drop_rate():
    """`keep_prob=`, `1 - rate` and a keep-like literal work as intended on 2.10 (measured by the MSL062 oracle
    test: `keep_prob=0.9` zeroes 10 %): only the deprecation is left, a warning. A literal under 0.5 reads as
    PyTorch's `p`: the layer zeroes the wrong share, an error. A name that only says drop or rate is a warning:
    MindSpore 1.x code passes keep probabilities under such names."""
    found = {d.row: d.severity for d in lint('''
        from mindspore import nn
        nn.Dropout(0.1)
        nn.Dropout(config.hidden_dropout)
        nn.Dropout(drop_rate)
        nn.Dropout(p)
        nn.Dropout(0.9)
        nn.Dropout(keep_prob=0.8)
        nn.Dropout(keep_prob=0.1)
        nn.Dropout(1 - config.attention_dropout)
        nn.Dropout(keep_prob)
        nn.Dropout(config.keep_prob)
        nn.Dropout(ratio)
        nn.Dropout(1. - dropout)
        nn.Dropout((1.0 - attention_probs_dropout_prob))
        nn.Dropout(float(1 - dropout))
        ''') if d.code == "MSL062"}
    assert found == {3: "error", 4: "warning", 5: "warning", 6: "warning", 7: "warning", 8: "warning",
                     9: "warning", 10: "warning", 11: "warning", 12: "warning", 13: "warning", 14: "warning",
                     15: "warning", 16: "warning"}


def test_msl062_values_reaching_a_name_decide_between_drop_rate_and_keep_probability():
    """The values the module shows for a name say which probability it holds: a default or a keyword under 0.5
    is PyTorch's drop rate (an error); a value above 0.5 anywhere (`final_drop=0.8` passed by the module, a
    test-phase `dropout_ratio = 1.0`, `rate = 1 - rate`) is MindSpore 1.x's keep probability (a warning)."""
    found = {d.row: d.severity for d in lint('''
        from functools import partial
        from mindspore import nn
        DROP = 0.1
        KEEP = 0.7


        class Block(nn.Cell):
            def __init__(self, dropout=0.1, final_drop=0., dropout_rate=0.3, attn_drop=0.):
                super().__init__()
                self.attn_drop = attn_drop
                self.a = nn.Dropout(dropout)
                self.b = nn.Dropout(final_drop)
                dropout_rate = 1 - dropout_rate
                self.c = nn.Dropout(dropout_rate)
                self.d = nn.Dropout(self.attn_drop)
                self.e = nn.Dropout(DROP)
                self.f = nn.Dropout(KEEP)


        def classifier(phase):
            dropout_ratio = 0.5
            if phase == "test":
                dropout_ratio = 1.0
            return nn.Dropout(dropout_ratio)


        large = partial(Block, final_drop=0.8, attn_drop=0.2)
        ''') if d.code == "MSL062"}
    assert found == {12: "error", 13: "warning", 15: "warning", 16: "error", 17: "error", 18: "warning",
                     25: "warning"}


def test_msl062_a_zero_that_reaches_the_keep_probability_is_an_error():
    """PyTorch's "no dropout", `drop=0.`, is a keep probability 2.10 refuses (`nn.Dropout(0.)`: ValueError, an int:
    TypeError; the oracle test measures both). A test of the name around the call keeps the zero away (ghostnet's
    `if self.final_drop > 0:`), and values callers pass decide as before."""
    found = {d.row: (d.severity, "raises" in d.message) for d in lint('''
        from mindspore import nn


        class Block(nn.Cell):
            def __init__(self, drop=0., final_drop=0., rate=0., keep=0):
                super().__init__()
                self.a = nn.Dropout(drop)
                self.b = nn.Dropout(0.)
                self.final_drop = final_drop
                if self.final_drop > 0:
                    self.c = nn.Dropout(self.final_drop)
                self.d = nn.Dropout(self.final_drop)
                self.e = nn.Dropout(drop) if drop else None
                self.f = nn.Dropout(rate)
                self.g = nn.Dropout(keep)
                self.h = nn.Dropout(keep_prob=0.0)


        small = Block(rate=0.1)
        ''') if d.code == "MSL062"}
    assert found == {8: ("error", True), 9: ("error", True), 12: ("warning", False), 13: ("error", True),
                     14: ("warning", False), 15: ("error", False), 16: ("error", True), 17: ("error", True)}


def test_msl006_weight_free_layers_built_in_graph_code_are_warnings():
    """nn.Norm and nn.Range carry no weights and no training mode: built in construct they compute the right
    result every call (the MSL006 oracle test measures it), only rebuilt at each compile; nn.PSNR has no weights
    and nn.SSIM only its fixed Gaussian window (graph mode gives the values of the layers built outside, measured);
    nn.ReduceLogSumExp holds nothing either (mindsponge's metrics, issue 19's thirteenth sample). A Dense is an
    error."""
    linter = Linter(Settings(select=("MSL006",)))
    source = textwrap.dedent('''
        from mindspore import nn

        class Net(nn.Cell):
            def construct(self, x):
                x = x / nn.Norm(axis=-1, keep_dims=True)(x)
                x = x + nn.Range(0, 4, 1)()
                x = nn.Conv2d(4, 4, 1, weight_init="ones")(x)
                x = nn.Conv2d(4, 4, 1, weight_init="normal")(x)
                x = x + nn.PSNR()(x, x) + nn.SSIM()(x, x)
                x = x + nn.ReduceLogSumExp(-1, False)(x)
                return nn.Dense(4, 4)(x)
        ''')
    found = linter.lint_source(SourceFile(path="net.py", text=source, module_name="net")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(6, "warning"), (7, "warning"), (8, "warning"), (9, "error"),
                                                    (10, "warning"), (10, "warning"), (11, "warning"),
                                                    (12, "error")]


def test_msl034_a_training_wrapper_keeping_its_networks_parameters_is_a_warning():
    """`self.trainable_params = network.trainable_params()` in a TrainOneStep-style wrapper: Model(wrapper).train
    works on 2.10 (measured), only a later wrapper.trainable_params() call fails. Any other value is an error."""
    linter = Linter(Settings(select=("MSL034",)))
    source = textwrap.dedent('''
        from mindspore import nn

        class Wrap(nn.Cell):
            def __init__(self, network):
                super().__init__()
                self.trainable_params = network.trainable_params()
                self.trainable_params = []

            def construct(self, x):
                return x
        ''')
    found = linter.lint_source(SourceFile(path="net.py", text=source, module_name="net")).diagnostics
    assert [(d.row, d.severity) for d in found] == [(7, "warning"), (8, "error")]


@pytest.mark.parametrize("mode, fires", [("", False), ("ms.set_context(mode=ms.GRAPH_MODE)", True),
                                         ("ms.set_context(mode=0)", True), ("ms.set_context(mode=args.mode)", True),
                                         ("ms.set_context(mode=ms.PYNATIVE_MODE)", False)])
def test_msl036_needs_a_module_that_may_select_graph_mode(mode, fires):
    """PyNative, MindSpore 2.10's default mode, switches `set_train` correctly (issue 19): MSL036 fires only where
    the script selects GRAPH_MODE or reads the mode from elsewhere."""
    linter = Linter(Settings(select=("MSL036",)))
    source = f"import mindspore as ms\n{mode}\nnet = Net()\nnet(x)\nnet.set_train(True)\n"
    found = linter.lint_source(SourceFile(path="train.py", text=source, module_name="train")).diagnostics
    assert bool(found) is fires


def test_msl031_buffers_created_with_requires_grad_false_are_a_warning():
    """A hand-updated list of `requires_grad=False` Parameters is not trained either way (issue 19): only their
    absence from parameters_dict() and checkpoints is left to say, as a warning, and registering them is unsafe."""
    linter = Linter(Settings(select=("MSL031",)))
    source = textwrap.dedent('''
        from mindspore import Parameter, Tensor, nn

        class Net(nn.Cell):
            def __init__(self, t):
                super().__init__()
                self.history = [Parameter(t, name=f"h{i}", requires_grad=False) for i in range(3)]
                self.weights = [Parameter(t, name=f"w{i}") for i in range(3)]
        ''')
    found = linter.lint_source(SourceFile(path="net.py", text=source, module_name="net")).diagnostics
    assert [(d.row, d.severity, d.fix.applicability) for d in found] == [(7, "warning", "unsafe"),
                                                                        (8, "error", "unsafe")]
    assert "missing from `parameters_dict()` and from checkpoints" in found[0].message


def test_msl032_reads_behind_a_flag_folded_at_compile_time_are_warnings():
    """A read under `if self.<flag>` compiles while the flag keeps it out (the oracle test measures it), and a
    library may set the attribute whenever it sets the flag (Hugging Face's gradient checkpointing, issue 19):
    a warning. Under `if self.use_reg:` with `self.use_reg = True` only, it is compiled: an error."""
    linter = Linter(Settings(select=("MSL032",)))
    source = textwrap.dedent('''
        from mindspore import nn

        class Head(nn.Cell):
            def __init__(self, scale):
                super().__init__()
                self.use_reg = True
                self.gradient_checkpointing = False
                self.use_layer_scale = scale

            def construct(self, x):
                if self.use_reg:
                    x = self.bbox_pred(x)
                if self.gradient_checkpointing and self.training:
                    x = self._gradient_checkpointing_func(x)
                if not self.use_layer_scale:
                    x = self.norm1(x)
                if not self.use_layer_scale or (self.use_layer_scale and self.is_first_iteration):
                    x = x + 1
                if self.use_reg and self.reg_scale:
                    x = x * 2
                return x
        ''')
    found = linter.lint_source(SourceFile(path="net.py", text=source, module_name="net")).diagnostics
    # a short-circuit folds like an `if` (mindformers' `use_past and is_first_iteration`, copied into a
    # community mindocr, issue 19): `reg_scale` is read whenever `use_reg`, which is always True
    assert [(d.row, d.severity) for d in found] == [(13, "error"), (15, "warning"), (17, "warning"),
                                                    (18, "warning"), (20, "error")]


def test_msl062_a_local_ratio_of_one_half_is_a_warning():
    """`dropout_ratio = 0.5` then `nn.Dropout(dropout_ratio)` (issue 19): keeping or zeroing half is the same."""
    linter = Linter(Settings(select=("MSL062",)))
    source = textwrap.dedent('''
        from mindspore import nn

        def head():
            dropout_ratio = 0.5
            drop = 0.2
            return nn.Dropout(dropout_ratio), nn.Dropout(drop)
        ''')
    found = linter.lint_source(SourceFile(path="net.py", text=source, module_name="net")).diagnostics
    assert [(d.column, d.severity) for d in found] == [(11, "warning"), (38, "error")]


def test_msl023_a_cell_used_as_a_part_gets_what_its_callers_pass():
    """FaceDetection's `PtLinspace` (issue 19, both judged samples): built only as `self.pt_linspace = PtLinspace()`
    and called with ints from a static shape, so `range(start, end + 1, step)` compiles; a part given tensor data
    (`Counter`) is still reported."""
    linter = Linter(Settings(select=("MSL023",)))
    source = textwrap.dedent('''
        from mindspore import nn, ops

        class PtLinspace(nn.Cell):
            def construct(self, start, end, steps):
                points = ()
                step = (end - start + 1) // steps
                for i in range(start, end + 1, step):
                    points += (i,)
                return points

        class Counter(nn.Cell):
            def construct(self, x, n):
                out = ()
                for i in range(n):
                    out += (x * i,)
                return out + (n + x,)

        class YoloLoss(nn.Cell):
            def __init__(self):
                super().__init__()
                self.pt_linspace = PtLinspace()
                self.counter = Counter()

            def construct(self, output):
                width = ops.Shape()(output)[3]
                return self.pt_linspace(0, width - 1, width), self.counter(output, output.sum())
        ''')
    found = linter.lint_source(SourceFile(path="loss.py", text=source, module_name="loss")).diagnostics
    assert [d.row for d in found] == [15]


def test_a_part_given_a_dict_of_tensors_still_holds_tensors():
    """ESMFold's structure module is given `{"single": s, "pair": z}`: not a Python number, so `outputs["pair"]`
    stays tensor data and its `.cpu()` is reported."""
    linter = Linter(Settings(select=("MSL064",)))
    source = textwrap.dedent('''
        from mindspore import nn

        class Structure(nn.Cell):
            def construct(self, outputs, aatype):
                return outputs["pair"].cpu()

        class Folding(nn.Cell):
            def __init__(self):
                super().__init__()
                self.structure = Structure()
                self.dense = nn.Dense(2, 2)

            def construct(self, s, z):
                return self.structure({"single": self.dense(s), "pair": self.dense(z)}, 3)
        ''')
    found = linter.lint_source(SourceFile(path="fold.py", text=source, module_name="fold")).diagnostics
    assert [d.row for d in found] == [6]


def test_msl062_a_half_gives_one_replacement():
    """`nn.Dropout(0.5)` zeroes half as keep_prob and as PyTorch's `p`: the message names one `p=`, not two equal
    alternatives ("write `p=0.5`, else `p=0.5`"); 0.7 still names both readings."""
    messages = {d.row: d.message for d in lint('''
        from mindspore import nn
        nn.Dropout(0.5)
        nn.Dropout(0.7)
        ''') if d.code == "MSL062"}
    assert "else" not in messages[3] and "write `p=0.5`" in messages[3]
    assert "write `p=0.7`, else `p=0.3`" in messages[4]


def test_msl076_a_caught_value_error_is_a_warning():
    """Inside `try: ... except Exception:` the script goes on without the option (issue 19's seventh sample)."""
    text = textwrap.dedent('''
        import mindspore as ms
        ms.set_context(enable_mem_reuse=True)
        try:
            ms.set_context(enable_parallel_optimizer=True)
        except Exception:
            pass
        try:
            ms.set_context(enable_dynamic_memory=True)
        except ImportError:
            pass
        ''')
    result = Linter(Settings(select=("MSL076",))).lint_source(SourceFile(path="module.py", text=text,
                                                                         module_name="module"))
    found = {d.row: (d.severity, d.message) for d in result.diagnostics}
    assert found[3][0] == "error" and "before anything runs" in found[3][1]
    assert found[5][0] == "warning" and "which the `except` at line 6 catches" in found[5][1]
    assert found[9][0] == "error"


def test_msl064_leaves_a_module_alone_that_imports_a_shim_adding_the_method():
    """mindformers' PyNative trainer imports `enable_mindspore_backward_compat`, which adds `Tensor.backward`:
    `loss.backward(sense)` there is not the PyTorch leftover it is in a plain MindSpore module."""
    linter = Linter(Settings(select=("MSL064",)))
    source = textwrap.dedent('''
        import mindspore as ms
        from hyper_parallel.autograd_compat import enable_mindspore_backward_compat

        def step(compute_loss, sense):
            loss = compute_loss()
            loss.backward(sense)
            return loss.cpu()
        ''')
    found = linter.lint_source(SourceFile(path="trainer.py", text=source, module_name="trainer")).diagnostics
    assert [(d.row, d.code) for d in found] == [(8, "MSL064")]


def test_names_of_mindspore_itself_in_a_module_that_spells_neither_nn_nor_ops():
    """MINER (issue 19's sixteenth sample): `mindspore.max(predicts, dim=-1)[1]` in a metrics module whose text
    holds neither `nn` nor `ops`, MSL067's needles before."""
    assert codes("""
        import mindspore

        def span_f1(predicts):
            return mindspore.max(predicts, dim=-1)[1]
    """) == [(5, "MSL067")]


def test_msl064_a_cells_own_grad_attribute_is_not_a_tensors():
    """MindSpore's BERT accumulation wrappers (in a community model zoo) keep `self.grad = ops.GradOperation(...)`
    and call `self.grad(self.network, weights)`: a tensor's `.grad` (AttributeError, measured) is PyTorch's, the
    Cell's own attribute is not. The previous code took `self` for a tensor here."""
    found = [(d.row, d.code) for d in lint('''
        from mindspore import nn, ops


        class AccumulationStep(nn.Cell):
            def __init__(self, network, optimizer):
                super().__init__(auto_prefix=False)
                self.network = network
                self.weights = optimizer.parameters
                self.grad = ops.GradOperation(get_by_list=True, sens_param=True)
                self.select = ops.Select()
                self.local_step = 0

            def construct(self, x, sens=None):
                loss = self.network(x)
                self.local_step = self.select(loss > 0, self.local_step + 1, 1)
                return loss, self.grad(self.network, self.weights)(x, sens), x.grad
        ''') if d.code == "MSL064"]
    assert found == [(17, "MSL064")]  # `x.grad` on the input only
