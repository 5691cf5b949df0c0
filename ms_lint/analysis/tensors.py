"""Which expressions of a compiled function hold tensor data (as opposed to shapes, dtypes, Python numbers).

Rules use this to tell `np.sum(x)` (NumPy on a tensor: a graph pitfall) from `np.prod(x.shape)` (NumPy on a
Python tuple: folded at compile time). It is a cheap, position-ordered reaching-definitions approximation:
a name holds what its last assignment before the use assigned (branches and loop back-edges are not followed).

Function parameters hold tensors unless they are clearly Python scalars: a literal default, a scalar annotation,
or every use is in a shape position (`Tensor(np.zeros((B, H, W)))`, `range(n)`, slice bounds, arithmetic feeding
those).
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from ms_lint.analysis import framework
from ms_lint.analysis.bindings import ReachingDefinitions, stores_an_element, target_names
from ms_lint.analysis.graph import GraphScope
from ms_lint.analysis.python_numbers import (
    METADATA_ATTRIBUTES,
    METADATA_METHODS,
    in_shape_position,
    project_returns_metadata,
    returns_metadata,
)
from ms_lint.analysis.sub_cells import construct_calls
from ms_lint.analysis.walk import (
    FUNCTIONS,
    enclosing_function,
    parameter_defaults,
    self_parameter,
)

# Methods that copy tensor data to the host.
HOST_CONVERSIONS = frozenset({"asnumpy", "numpy", "tolist", "item"})
# NumPy callables returning scalars or dtypes rather than arrays.
NUMPY_SCALAR_FUNCTIONS = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                    "bool_", "dtype", "finfo", "iinfo", "prod", "isscalar", "ndim", "shape", "size"})
# Builtins whose result never holds tensor data.
_NON_DATA_BUILTINS = frozenset({"len", "isinstance", "issubclass", "type", "range", "hasattr", "callable", "id",
                                "str", "repr", "print", "getattr"})
# NumPy reductions: over the whole array (no `axis`) they return a NumPy scalar, not an array.
_NUMPY_REDUCTIONS = frozenset({"sum", "mean", "max", "min", "prod", "std", "var", "median", "amax", "amin", "ptp",
                               "argmax", "argmin", "any", "all", "average", "nansum", "nanmean", "nanmax", "nanmin",
                               "count_nonzero", "linalg.norm", "norm", "dot", "vdot", "trace"})
_SCALAR_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "tuple", "list"})
_MAX_DEPTH = 60  # deeper expressions are given up on (reported as not derived) instead of recursing further

Position = Tuple[int, int]


class Tensors:
    """The tensor-value analysis of each function of one module, built on first use (`ctx.tensors(node)`)."""

    def __init__(self, graph: GraphScope):
        self.graph = graph
        # function -> its analysis (None while it is built); module-level code under the None key
        self._values: Dict[Optional[ast.AST], Optional[TensorValues]] = {}

    def __call__(self, node: ast.AST) -> "TensorValues":
        """The analysis of the function that contains `node` (or is `node`)."""
        function = node if isinstance(node, FUNCTIONS) else enclosing_function(node)
        values = self._values.get(function)
        if values is None:
            self._values[function] = None  # under construction: callers asked back get the fallback
            values = self._values[function] = TensorValues(self, function)
        return values

    def under_construction(self, function: Optional[ast.AST]) -> bool:
        """Is the analysis of `function` being built (a recursive helper asks about its own call sites)?"""
        return function in self._values and self._values[function] is None

    def derives(self, expr: ast.AST) -> bool:
        """Does `expr`, inside some function, hold tensor data (`TensorValues.derives`)?"""
        return enclosing_function(expr) is not None and self(expr).derives(expr)

    def release(self) -> None:
        self._values.clear()


class TensorValues:
    def __init__(self, tensors: Tensors, function):
        self.tensors = tensors
        self.graph = tensors.graph
        self.function = function
        self._definitions = ReachingDefinitions(tensors.graph.walk.nodes_of(function).bindings)
        self._memo: Dict[int, bool] = {}
        self._local: Optional["TensorValues"] = None  # the same analysis with arguments taken for numbers
        # some caller passes a NumPy array (or other host data) to one of the parameters: a NumPy helper that also
        # runs on host data, which a rewrite to MindSpore ops would break (MSL001 offers no fix there)
        self.called_with_host_arrays = False
        # parameters whose kind is known, not guessed: annotated, or given by every host call (`Tensor(...)`)
        self.certain_parameters: Dict[str, str] = {}
        self.parameters = self._parameters()

    # ----- public queries -------------------------------------------------------------------------------------
    def derives(self, expr: ast.AST, depth: int = 0) -> bool:
        """True if `expr` evaluates to a tensor, or to host data computed from one (`x.asnumpy()`, `x.item()`)."""
        if depth > _MAX_DEPTH:
            return False
        key = id(expr)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = False  # cycle guard (`x = x + 1` in a loop)
        result = self._derives(expr, depth + 1)
        self._memo[key] = result
        return result

    def derives_locally(self, expr: ast.AST) -> bool:
        """`derives` in entry points (`construct`, `forward`, `bprop`, `@jit` functions), whose arguments are the
        network's inputs; `computed` in helpers, whose arguments are whatever callers pass, often Python ints
        from attributes (`self.split(x, self.width)`)."""
        return self.derives(expr) if self._is_entry_point() else self.computed(expr)

    def computed(self, expr: ast.AST) -> bool:
        """Tensor data the function computes itself (ops, tensor methods, Parameters, `Tensor`-annotated
        arguments), unannotated arguments taken for Python values (a `@jit` function's may be an int)."""
        if self._local is None:
            self._local = TensorValues(self.tensors, self.function)
            self._local.parameters = {name: kind if self._annotated_tensor(name) else "scalar"
                                      for name, kind in self.parameters.items()}
        return self._local.derives(expr)

    def _is_entry_point(self) -> bool:
        name = getattr(self.function, "name", None)
        return any(name == (entry.name.rpartition(".")[2] if entry.kind == "jit" else entry.kind)
                   for entry in self.graph.compiled.get(self.function, ()))

    def _annotated_tensor(self, name: str) -> bool:
        arguments = self.function.args
        return any(arg.arg == name and arg.annotation is not None
                   and self.graph.names.qualname(arg.annotation) in framework.TENSOR_CLASSES
                   for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs))

    def definition(self, name: ast.Name) -> Optional[ast.AST]:
        """What the binding that reaches `name` assigned: the value expression of `m = x > 0` for a later `x[m]`,
        the `For`/`comprehension` node for a loop target, the statement for an import or def. None for
        parameters and names this function never binds (same approximation as `derives`)."""
        found = self._definitions.reaching(name)
        if found is None:
            return None
        statement, value = found
        return value if value is not None else statement

    def on_host(self, expr: ast.AST, depth: int = 0) -> bool:
        """True if `expr` is host data (a NumPy array or Python value), e.g. `x.asnumpy()`, `np.exp(y)`."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in HOST_CONVERSIONS and not self.is_self(func.value):
                return True
            if isinstance(func, ast.Attribute) and self.on_host(func.value, depth + 1):
                return True  # a method of host data (`boxes.reshape(-1, 4)` of `boxes = t.asnumpy()`)
            qualname = self.graph.names.qualname(func)
            if framework.is_host_numeric(qualname) or qualname in ("builtins.int", "builtins.float",
                                                                   "builtins.bool", "builtins.list"):
                return True
            return self._plain_function_of_host_data(expr, qualname, depth)
        if isinstance(expr, ast.Name):
            definition = self._definitions.reaching(expr)
            value = definition[1] if definition else None
            if isinstance(value, (ast.For, ast.comprehension)):
                return self.on_host(value.iter, depth + 1)  # `for n in lengths.tolist():`
            return isinstance(value, ast.expr) and self.on_host(value, depth + 1)
        if isinstance(expr, (ast.List, ast.Tuple)):
            values = [e for e in expr.elts if not isinstance(e, ast.Constant)]
            return bool(values) and all(self.on_host(e, depth + 1) or not self.derives(e) for e in values) \
                and any(self.on_host(e, depth + 1) for e in values)
        if isinstance(expr, ast.IfExp):  # `mask.sum(-1).tolist() if mask is not None else [n] * b`
            return self.on_host(expr.body, depth + 1) and (self.on_host(expr.orelse, depth + 1)
                                                           or not self.derives(expr.orelse))
        element = self._literal_element(expr) if isinstance(expr, ast.Subscript) else None
        if element is not None:
            return self.on_host(element, depth + 1)
        if isinstance(expr, (ast.Subscript, ast.Attribute)):
            return self.on_host(expr.value, depth + 1)
        if isinstance(expr, ast.BinOp):  # host data with host data or Python values (`t.item() - (k - 1)`)
            operands = [o for o in (expr.left, expr.right) if not isinstance(o, ast.Constant)]
            hosted = [self.on_host(o, depth + 1) for o in operands]
            return any(hosted) and all(h or not self.derives(o) for h, o in zip(hosted, operands))
        if isinstance(expr, ast.UnaryOp):
            return self.on_host(expr.operand, depth + 1)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.on_host(expr.elt, depth + 1)  # `[linear_sum_assignment(c) for c in np.split(cost, n)]`
        return False

    def _plain_function_of_host_data(self, call: ast.Call, qualname: Optional[str], depth: int) -> bool:
        """A function of the module's own (not MindSpore, not a Cell, not a method of `self`) given host data
        and Python values only: what it returns stays on the host (`compute_num_masked_span(length)`)."""
        func = call.func
        if func.__class__ is not ast.Name or (qualname is not None and (
                qualname.startswith("mindspore") or framework.returns_tensor(qualname)
                or self.graph.is_cell_class(qualname))):
            return False  # (no qualified name: a def local to the function)
        arguments = [*call.args, *(k.value for k in call.keywords)]
        derived = [a for a in arguments if self.derives(a)]
        return bool(derived) and all(self.on_host(a, depth + 1) for a in derived)

    def is_graph_tensor(self, expr: ast.AST) -> bool:
        """A tensor in the graph (not converted to host data)."""
        return self.derives(expr) and not self.on_host(expr)

    def is_ndarray(self, expr: ast.AST, depth: int = 0) -> bool:
        """A NumPy array: the result of a NumPy call (not a NumPy scalar type) or of `.asnumpy()`."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in ("asnumpy", "numpy") and self.derives(func.value):
                return True
            if isinstance(func, ast.Attribute) and func.attr in _ARRAY_METHODS and self.is_ndarray(func.value,
                                                                                                   depth + 1):
                return True  # `grid.reshape(...)` of an array is an array
            qualname = self.graph.names.qualname(func) or ""
            function = qualname.rpartition(".")[2]
            if not qualname.startswith("numpy.") or function in NUMPY_SCALAR_FUNCTIONS:
                return False
            if function in _NUMPY_REDUCTIONS and len(expr.args) == 1 and not any(
                    k.arg in ("axis", "keepdims") for k in expr.keywords):
                return False  # np.mean(a): a NumPy scalar, which tensors take (measured)
            # an array constructor, or NumPy applied to arrays or tensor data (not scalar math such as np.sqrt(4))
            return qualname.rpartition(".")[2] in framework.NUMPY_ARRAY_CONSTRUCTORS or any(
                self.is_ndarray(a, depth + 1) or self.derives(a) for a in expr.args)
        if isinstance(expr, ast.Name):
            definition = self._definitions.reaching(expr)
            store: Any = definition[0] if definition is not None else None
            if stores_an_element(store, expr.id):  # `onehot[:, 0] = seq[-1][0]` writes into the array: it stays one
                before = ast.Name(id=expr.id, ctx=ast.Load(), lineno=store.lineno, col_offset=store.col_offset)
                return self.is_ndarray(before, depth + 1)
            value = definition[1] if definition else None
            return isinstance(value, ast.expr) and self.is_ndarray(value, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self.is_ndarray(expr.left, depth + 1) or self.is_ndarray(expr.right, depth + 1)
        if isinstance(expr, ast.Subscript) and self._one_dimensional_literal(expr.value) \
                and isinstance(expr.slice, (ast.Constant, ast.Name, ast.UnaryOp)):
            return False  # `np.array([3, 2])[1]`: an element, a NumPy scalar
        if isinstance(expr, ast.Attribute) and expr.attr == "T" or isinstance(expr, ast.Subscript):
            return self.is_ndarray(expr.value, depth + 1)  # `a.T`, `grid[0]`
        return False

    def _one_dimensional_literal(self, expr: Optional[ast.AST]) -> bool:
        """`np.array([3, 2])` (or a name bound to it): an array built from a flat list of numbers."""
        if isinstance(expr, ast.Name):
            definition = self._definitions.reaching(expr)
            expr = definition[1] if definition and isinstance(definition[1], ast.expr) else None
        if not (isinstance(expr, ast.Call) and expr.args and isinstance(expr.args[0], (ast.List, ast.Tuple))):
            return False
        return (self.graph.names.qualname(expr.func) or "") in ("numpy.array", "numpy.asarray") \
            and all(isinstance(e, ast.Constant) for e in expr.args[0].elts)

    # ----- implementation -------------------------------------------------------------------------------------
    def _derives(self, expr: ast.AST, depth: int) -> bool:
        derives = self.derives
        if isinstance(expr, ast.Name):
            return self._name_derives(expr, depth)
        if isinstance(expr, ast.Constant):
            return False
        if isinstance(expr, ast.Attribute):
            if expr.attr in METADATA_ATTRIBUTES:
                return False
            if self.is_self(expr.value):
                return self._self_attribute_is_tensor(expr.attr)
            return derives(expr.value, depth)
        if isinstance(expr, ast.Subscript):
            value = expr.value
            if isinstance(value, ast.Attribute) and value.attr in METADATA_ATTRIBUTES:
                return False
            element = self._literal_element(expr)
            return derives(element if element is not None else value, depth)
        if isinstance(expr, ast.Call):
            return self._call_derives(expr, depth)
        if isinstance(expr, ast.BinOp):
            return derives(expr.left, depth) or derives(expr.right, depth)
        if isinstance(expr, ast.UnaryOp):
            return derives(expr.operand, depth)
        if isinstance(expr, ast.BoolOp):
            return any(derives(value, depth) for value in expr.values)
        if isinstance(expr, ast.Compare):
            return derives(expr.left, depth) or any(derives(c, depth) for c in expr.comparators)
        if isinstance(expr, ast.IfExp):
            return derives(expr.body, depth) or derives(expr.orelse, depth)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return any(derives(element, depth) for element in expr.elts)
        if isinstance(expr, ast.Starred):
            return derives(expr.value, depth)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return derives(expr.elt, depth)
        if isinstance(expr, ast.NamedExpr):
            return derives(expr.value, depth)
        return False

    def _call_derives(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        arguments = [*call.args, *(k.value for k in call.keywords)]
        if isinstance(func, ast.Attribute):
            if self.is_self(func.value):
                if self._holds_metadata_primitive(func.attr):
                    return False
                # self.cell(x) runs a Cell; self.method(x) is assumed to compute on its tensor arguments
                return self._self_attribute_is_tensor(func.attr, callable_=True) or any(
                    self.derives(a, depth) for a in arguments)
            if func.attr in METADATA_METHODS or func.attr in METADATA_ATTRIBUTES:
                return False  # `x.numel()`; `x.shape(1)` (torch's `size(1)`) fails before giving anything: MSL064
            if self.derives(func.value, depth):
                return True  # x.sum(), x.asnumpy(), x.item()
        if func.__class__ is ast.Name and returns_metadata(self.graph.top_level_defs().get(func.id)):
            return False  # a helper of the module returning shape ints (`def size(x, d): return x.shape[d]`)
        qualname = self.graph.names.qualname(func)
        if project_returns_metadata(self.graph.index, qualname):
            return False  # the same, from another module of the project (x2ms's `tensor_api.x2ms_size(x)`)
        if framework.returns_metadata(qualname) or (
                isinstance(func, ast.Call) and framework.returns_metadata(self.graph.names.qualname(func.func))):
            return False  # ops.shape(x), P.Shape()(x): a tuple of Python ints
        if func.__class__ is not ast.Call and framework.constructs_primitive(qualname):
            return False  # `ops.MaxPool3D(x, kernel_size=...)`, torch's functional form ported: an operator (MSL070)
        if qualname:
            if qualname.startswith("builtins."):
                return qualname[len("builtins."):] not in _NON_DATA_BUILTINS and any(
                    self.derives(a, depth) for a in arguments)
            if framework.returns_tensor(qualname):
                return True
            if isinstance(func, ast.Call) and framework.returns_tensor(self.graph.names.qualname(func.func)):
                return True
        elif isinstance(func, ast.Call) and framework.returns_tensor(self.graph.names.qualname(func.func)):
            return True  # P.ReduceSum()(x)
        return any(self.derives(a, depth) for a in arguments)

    def _literal_element(self, subscript: ast.Subscript) -> Optional[ast.expr]:
        """`b` for `[a, b, c][1]`, or for `sizes[1]` after `sizes = [a, b, c]`: a constant index into a literal."""
        index: Any = subscript.slice
        value: Any = subscript.value
        if not (isinstance(index, ast.Constant) and type(index.value) is int):
            return None
        if isinstance(value, ast.Name):
            value = self.definition(value)
        if isinstance(value, (ast.List, ast.Tuple)) and -len(value.elts) <= index.value < len(value.elts) \
                and not any(isinstance(e, ast.Starred) for e in value.elts):
            return value.elts[index.value]
        return None

    def _name_derives(self, name: ast.Name, depth: int) -> bool:
        definition = self._definitions.reaching(name)
        if definition is None:
            return self.parameters.get(name.id) == "tensor"
        target, value = definition
        if value is None:
            return False
        if isinstance(value, ast.For) or isinstance(value, ast.comprehension):
            if _enumerate_index(value, name.id, self.graph) or self._unpacks_guessed_parameter(value):
                return False  # `for i, c in enumerate(chunks)`: `i` counts
            return self.derives(value.iter, depth)
        if isinstance(value, ast.AugAssign):
            return self.derives(value.value, depth) or self._previous_derives(value, name.id, depth)
        return self.derives(value, depth)

    def _unpacks_guessed_parameter(self, loop) -> bool:
        """`for start, size in scope` (or `enumerate(scope)`) over a parameter taken for a tensor for want of a
        caller that says: pairs unpacked from it are a list of tuples' (KANO's `a_scope` of atom ranges,
        MaskTextSpotter's beams of `(char, score, ...)`), not rows of a tensor."""
        target, iterable = loop.target, loop.iter
        enumerated = _enumerated(loop, self.graph)
        if enumerated is not None:
            _, target, iterable = enumerated
        return isinstance(target, ast.Tuple) and self._from_guessed_parameter(iterable)

    def _from_guessed_parameter(self, iterable: ast.expr, depth: int = 0) -> bool:
        """Is `iterable` such a parameter, or an element of one (`for seq in top_seqs:`, then `seq`)?"""
        if not isinstance(iterable, ast.Name) or depth > 3:
            return False
        definition = self._definitions.reaching(iterable)
        if definition is None:
            return iterable.id in self.parameters and iterable.id not in self.certain_parameters
        loop = definition[1]
        return isinstance(loop, (ast.For, ast.comprehension)) and isinstance(loop.target, ast.Name) \
            and self._from_guessed_parameter(loop.iter, depth + 1)

    def _previous_derives(self, stmt: ast.AugAssign, name: str, depth: int) -> bool:
        probe = ast.Name(id=name, ctx=ast.Load(), lineno=stmt.lineno, col_offset=stmt.col_offset)
        return self._name_derives(probe, depth)

    def _parameters(self) -> Dict[str, str]:
        """parameter name -> "tensor" | "scalar" (self/cls excluded)."""
        arguments = self.function.args
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = parameter_defaults(arguments)
        owner = self.graph.owner_class(self.function)
        skip = self_parameter(self.function) if owner is not None else None
        kinds: Dict[str, str] = {}
        passed = self._passed_from_call_sites([a.arg for a in positional if a.arg != skip], skip is not None)
        if not passed:  # host calls give literal kinds: `Tensor(...)` or a number, not guessed ones
            passed = self._passed_from_host([a.arg for a in positional])
            self.certain_parameters = dict(passed)
        for arg in (*positional, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if arg is None or arg.arg == skip:
                continue
            default = defaults.get(arg.arg)
            annotation = arg.annotation
            if arg.arg in passed:
                kinds[arg.arg] = passed[arg.arg]
            elif isinstance(default, ast.Constant) and default.value is not None:
                kinds[arg.arg] = "scalar"
            elif isinstance(annotation, ast.Name) and annotation.id in _SCALAR_ANNOTATIONS:
                kinds[arg.arg] = "scalar"
            elif annotation is not None and self.graph.names.qualname(annotation) in framework.TENSOR_CLASSES:
                # `n: Tensor` is a tensor even when only used as a shape or bound
                kinds[arg.arg] = self.certain_parameters[arg.arg] = "tensor"
            else:
                kinds[arg.arg] = "scalar" if self._only_shape_uses(arg.arg) else "tensor"
        return kinds

    def _passed_from_call_sites(self, positional, bound: bool) -> Dict[str, str]:
        """What graph-code callers pass: a helper's parameter holds tensor data only if some call does, e.g.
        `self._mask(26)` or `self._bbox(self.pool_shape)` make `sz` / `pool_shape` Python values. For an entry point
        (its arguments are the network's inputs) only the Python values a Cell used as a part of the module's other
        Cells is given (`sub_cells`); empty when a call site cannot be mapped or analysed."""
        entry = self._is_entry_point()
        if entry:  # the network's inputs, unless it is a part the module calls itself
            sites = construct_calls(self.graph).get(self.function) if self.function.name == "construct" else None
        else:
            sites = self.graph.call_sites.get(self.function)
        if not sites:
            return {}
        kinds: Dict[str, str] = {}
        for call in sites:
            if self.tensors.under_construction(enclosing_function(call)) or any(k.arg is None for k in call.keywords):
                return {}  # a recursive helper, or **kwargs: fall back to the usage heuristics
            values = self.tensors(call)
            explicit_self = bound and isinstance(call.func, ast.Attribute) and not _is_bound_call(call.func)
            arguments = call.args[1:] if explicit_self else call.args
            starred = next((i for i, a in enumerate(arguments) if isinstance(a, ast.Starred)), None)
            if starred is not None:
                spread: Any = arguments[starred]
                if values.derives(spread.value):
                    return {}  # `*tensors`: which parameter gets what is not known
                # `*x.shape[2:]`, `*hw_shape` of a shape: every parameter from there on gets a Python value
                for name in positional[starred:]:
                    kinds.setdefault(name, "scalar")
                arguments = arguments[:starred]
            mapped = list(zip(positional, arguments)) + [(k.arg, k.value) for k in call.keywords]
            for name, value in mapped:
                on_host = values.is_ndarray(value) or values.on_host(value)
                if on_host:
                    self.called_with_host_arrays = True
                # host data computed from a tensor (DETR's matcher passes `.asnumpy()` results to its IoU helper:
                # issue 19's ninth sample) is no tensor in the helper
                if values.derives(value) and not on_host or (entry and not _number_like(values, value)):
                    kinds[name] = "tensor"
                else:
                    kinds.setdefault(name, "scalar")
        if entry:  # a part's construct: its callers' Python values count, not their guesses
            return {name: kind for name, kind in kinds.items() if kind == "scalar"}
        return kinds

    def _passed_from_host(self, positional: List[str]) -> Dict[str, str]:
        """What host code passes a `@jit` function defined in a function or module (`foo(Tensor(2), 3)` in the
        def around it): a `Tensor(...)` (or a name the scope binds only to one) makes a tensor, a number
        literal a Python constant, which the compiler specializes on and folds. Only arguments every call of
        the function's name in that scope gives the same kind; empty for Cell methods and unknown calls."""
        function = self.function
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or self.graph.owner_class(function) \
                or not any(entry.kind == "jit" for entry in self.graph.compiled.get(function, ())):
            return {}
        scope = enclosing_function(function) or self.graph.tree
        nodes = self.graph.walk.subtree(scope)
        calls = [node for node in nodes if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                 and node.func.id == function.name]
        tensors_bound = _names_bound_only_to_tensors(nodes, self.graph)
        kinds: Dict[str, str] = {}
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return {}
            mapped = list(zip(positional, call.args)) + [(k.arg or "", k.value) for k in call.keywords]
            for name, value in mapped:
                kind = _host_kind(value, tensors_bound, self.graph)
                if kind is None or kinds.get(name, kind) != kind:
                    kinds[name] = "unknown"
                else:
                    kinds[name] = kind
        return {name: kind for name, kind in kinds.items() if kind != "unknown"}

    def _only_shape_uses(self, name: str) -> bool:
        uses = self.graph.walk.nodes_of(self.function).loads.get(name, ())
        return bool(uses) and all(in_shape_position(node) for node in uses)

    def is_self(self, expr: ast.AST) -> bool:
        if not isinstance(expr, ast.Name) or self.graph.owner_class(self.method()) is None:
            return False
        arguments = self.method().args
        positional = [*arguments.posonlyargs, *arguments.args]
        return bool(positional) and positional[0].arg == expr.id

    def method(self):
        """The method `self` refers to: this function, or the method a nested function/lambda sits in."""
        function = self.function
        while function is not None and self.graph.owner_class(function) is None:
            function = enclosing_function(function)
        return function if function is not None else self.function

    def _self_attribute_is_tensor(self, attribute: str, callable_: bool = False) -> bool:
        owner = self.graph.owner_class(self.method())
        if owner is None:
            return False
        for summary in self.graph.mro(owner):
            if attribute in summary.parameters or attribute in summary.tensors:
                return True
            if attribute in summary.methods:
                return False
        # self.<cell>(x) returns a tensor; a plain attribute holds config (ints, flags) unless proven otherwise.
        return callable_

    def _holds_metadata_primitive(self, attribute: str) -> bool:
        """`self.<attribute> = P.Shape()` (or `ops.Rank()`...) in the class or a base: calling it gives Python ints."""
        owner = self.graph.owner_class(self.method())
        return owner is not None and any(attribute in s.metadata_attributes for s in self.graph.mro(owner))


# ndarray methods that return an array
_ARRAY_METHODS = frozenset({"reshape", "astype", "transpose", "copy", "flatten", "ravel", "squeeze", "swapaxes",
                            "repeat", "clip", "round", "cumsum", "take"})


def _enumerate_index(loop, name: str, graph) -> bool:
    """Is `name` the count of `for name, item in enumerate(...)`?"""
    enumerated = _enumerated(loop, graph)
    return enumerated is not None and isinstance(enumerated[0], ast.Name) and enumerated[0].id == name


def _enumerated(loop, graph) -> Optional[Tuple[ast.expr, ast.expr, ast.expr]]:
    """(count target, item target, what is enumerated) of `for i, item in enumerate(items)`, None otherwise."""
    target, iterable = loop.target, loop.iter
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(iterable, ast.Call) \
            and iterable.args and graph.names.qualname(iterable.func) == "builtins.enumerate":
        return target.elts[0], target.elts[1], iterable.args[0]
    return None


def _host_kind(value: ast.expr, tensors_bound, graph) -> Optional[str]:
    if isinstance(value, ast.Call) and graph.names.qualname(value.func) in framework.TENSOR_CLASSES:
        return "tensor"
    if isinstance(value, ast.Name) and value.id in tensors_bound:
        return "tensor"
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) \
            and not isinstance(value.value, bool):
        return "scalar"
    return None


def _names_bound_only_to_tensors(nodes, graph) -> set:
    """Names every assignment of which, among `nodes`, is a `Tensor(...)` call."""
    bound: Dict[str, bool] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            is_tensor = isinstance(node.value, ast.Call) and graph.names.qualname(node.value.func) \
                in framework.TENSOR_CLASSES
            for target in node.targets:
                for name in target_names(target):
                    bound[name.id] = bound.get(name.id, True) and is_tensor
    return {name for name, only in bound.items() if only}


def _number_like(values, expr: ast.expr, depth: int = 0) -> bool:
    """Can this value, which holds no tensor data, be only a Python number (`0`, `width - 1` of a static shape,
    `self.n`)? A dict, list or call result (ESMFold's `{"single": s, "pair": z}`) holds tensors the analysis
    does not follow: not a number."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Constant):
        return type(expr.value) in (int, float, bool)
    if isinstance(expr, ast.BinOp):
        return _number_like(values, expr.left, depth + 1) and _number_like(values, expr.right, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _number_like(values, expr.operand, depth + 1)
    if isinstance(expr, (ast.Subscript, ast.Attribute)):
        return True  # an element of a shape, an attribute of the Cell (not tensor data: `derives` said so)
    if isinstance(expr, ast.Name):
        value = values.definition(expr)
        return value is None or (isinstance(value, ast.expr) and _number_like(values, value, depth + 1))
    return False


def _is_bound_call(func: ast.Attribute) -> bool:
    """`self.m(...)` / `super().m(...)` pass self implicitly; `Base.m(self, ...)` passes it explicitly."""
    value = func.value
    if isinstance(value, ast.Call):
        return True  # super().m(...)
    return isinstance(value, ast.Name) and not value.id[:1].isupper()
