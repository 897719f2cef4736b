#!/usr/bin/env python3
"""Records Plumb's parity goldens from TensorFlow.

Usage, from the repository root:

    .venv/bin/python parity/record/record.py               # rewrite every golden
    .venv/bin/python parity/record/record.py --only matmul  # rewrite one op's goldens
    .venv/bin/python parity/record/record.py --check        # re-record into a temp dir, compare bytes

Each case is written to parity/testdata/<op>/<case>/ as

    case.json     op, case, kind, attrs, dtype, seed, tolerance class, the
                  number of inputs, which inputs have recorded gradients,
                  and the tensorflow, keras and numpy versions
    in<i>.npy     input i, in Plumb's layout (NCHW images, OIHW conv
                  weights, [in, out] linear weights)
    out.npy       the op's output
    gout.npy      the upstream gradient fed to the backward pass
    grad<i>.npy   the gradient of input i (only for the inputs listed in
                  case.json's "grads")
    after<i>.npy  the value of input i after the op ran, for inputs an op
                  updates in place (batch norm's moving statistics)
    truth_<t>.npy float32 op and model cases: the float64 truth of tensor
                  <t> (out, grad<i>, after<i>), the same function run by TF
                  in float64 on the same float32 inputs and upstream
                  gradient; the harness holds Plumb to it, within
                  max(tolerance, 1.5 x TF's own float32 error against it)

Model cases (kind "model": a whole Plumb layer or model) add "params" to
case.json, each parameter's name and the input that holds its value.
Decode cases (kind "decode") hold paths.npy, the best tag paths
concatenated, and out.npy, their scores.

Optimizer cases (kind "optimizer") hold in0.npy, the initial variable, and
for each step k = 1, 2, 3: step<k>_grad.npy, the gradient applied, and
step<k>_var.npy, the variable after the step.

Layout differences are mapped here, never in the library: a case function
receives Plumb-layout tensors and transposes to TF's layout and back inside
the differentiated function, so the recorded gradients are in Plumb's layout.

Every case draws its inputs from numpy's default Generator seeded with a
CRC-32 of "<op>/<case>", so adding or reordering cases changes no other
case's data. float32 cases use the float64 draws rounded to float32. Inputs
of max-type ops (max/min reductions, maximum/minimum, relu-like kinks, clip,
max pool) are drawn away from ties and kinks.
"""

import argparse
import filecmp
import gzip
import itertools
import json
import os
import shutil
import sys
import tempfile
import zlib

# Plain Eigen kernels on one thread, so the same command rewrites the same
# bytes (oneDNN's kernels may pick other code paths per CPU and thread count).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

tf.config.experimental.enable_op_determinism()
tf.config.threading.set_intra_op_parallelism_threads(1)
tf.config.threading.set_inter_op_parallelism_threads(1)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = os.path.join(REPO, "parity", "testdata")
DTYPES = ("float32", "float64")
SUFFIX = {"float32": "f32", "float64": "f64"}
OPT_STEPS = 3


class Case:
    """One golden: op applied by fn to the inputs make(rng) returns.

    make(rng) returns float64 arrays (cast to the case dtype) or integer
    arrays (kept as they are). fn(xs) gets the inputs as tf.Variables and
    returns the output, or (output, subs, extras): subs maps an input index
    to the variable its gradient is taken for instead (a Keras layer's own
    weight), or to (variable, to_plumb) where to_plumb maps that gradient
    from Keras' layout back into Plumb's; extras maps an input index to its
    value after the op.

    Model cases (kind "model") run a whole Plumb layer or model: params maps
    a Plumb parameter name to the input index that holds its value, so the
    Go side loads the weights by name. Decode cases (kind "decode") return
    (paths, scores): every sequence's best tag path, concatenated, and its
    score.
    """

    def __init__(self, op, name, make, fn, attrs=None, grads=(0,), tol="default", kind="op", dtypes=DTYPES,
                 params=None, truth=True):
        self.op, self.name, self.make, self.fn = op, name, make, fn
        self.attrs, self.grads, self.tol, self.kind = attrs or {}, list(grads), tol, kind
        self.dtypes, self.params = dtypes, params
        # truth: the float32 case also records its float64 truth (op and
        # model kinds); off where the function is not the same in float64.
        self.truth = truth and kind in ("op", "model")


CASES = []


def add(*args, **kw):
    CASES.append(Case(*args, **kw))


# ---- input draws -----------------------------------------------------------


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def uniform(lo, hi, *shape):
    return lambda rng: rng.uniform(lo, hi, shape)


def distinct(rng, shape, lo=-2.0, hi=2.0):
    """Values spread over [lo, hi] with pairwise gaps of at least a third of
    (hi-lo)/size, shuffled: no ties, even after rounding to float32."""
    n = int(np.prod(shape, dtype=np.int64))
    step = (hi - lo) / max(n, 1)
    v = lo + (rng.permutation(n) + rng.uniform(0.0, 0.6, n)) * step
    return v.reshape(shape)


def away(rng, shape, points, margin=0.05, scale=1.5):
    """Normal draws (times scale) redrawn until none is within margin of a kink."""
    v = rng.standard_normal(shape) * scale
    for _ in range(100):
        bad = np.zeros(shape, dtype=bool)
        for p in points:
            bad |= np.abs(v - p) < margin
        if not bad.any():
            return v
        v = np.where(bad, rng.standard_normal(shape) * scale, v)
    raise RuntimeError("away: could not draw away from kinks")


def inputs(*makers):
    return lambda rng: [m(rng) for m in makers]


# ---- elementwise -----------------------------------------------------------

BINARY = {
    "add": tf.math.add,
    "sub": tf.math.subtract,
    "mul": tf.math.multiply,
    "div": tf.math.divide,
    "pow": tf.math.pow,
    "maximum": tf.math.maximum,
    "minimum": tf.math.minimum,
}
BINARY_SHAPES = {
    "same": ((3, 4), (3, 4)),
    "bcast_row": ((3, 4), (4,)),
    "bcast_outer": ((3, 1), (1, 4)),
    "scalar": ((2, 3), ()),
    "rank3": ((2, 1, 3), (4, 1)),
}


def binary_make(op, sa, sb):
    def make(rng):
        if op in ("maximum", "minimum"):
            v = distinct(rng, (int(np.prod(sa)) + int(np.prod(sb)),))
            return [v[: int(np.prod(sa))].reshape(sa), v[int(np.prod(sa)):].reshape(sb)]
        if op == "pow":
            return [rng.uniform(0.5, 2.0, sa), rng.standard_normal(sb)]
        if op == "div":
            return [rng.standard_normal(sa), rng.uniform(0.5, 2.0, sb) * rng.choice([-1.0, 1.0], sb)]
        return [rng.standard_normal(sa), rng.standard_normal(sb)]

    return make


for op, f in BINARY.items():
    for name, (sa, sb) in BINARY_SHAPES.items():
        add(op, name, binary_make(op, sa, sb), lambda xs, f=f: f(xs[0], xs[1]), grads=(0, 1))


def keras_elu(alpha):
    return lambda x: keras.activations.elu(x, alpha=alpha)


# name: (tf function, draw, attrs)
UNARY = {
    "neg": (tf.math.negative, lambda r, s: r.standard_normal(s), {}),
    "exp": (tf.math.exp, lambda r, s: r.standard_normal(s), {}),
    "log": (tf.math.log, lambda r, s: r.uniform(0.2, 3.0, s), {}),
    "sqrt": (tf.math.sqrt, lambda r, s: r.uniform(0.2, 3.0, s), {}),
    "rsqrt": (tf.math.rsqrt, lambda r, s: r.uniform(0.2, 3.0, s), {}),
    "square": (tf.math.square, lambda r, s: r.standard_normal(s), {}),
    "abs": (tf.math.abs, lambda r, s: away(r, s, [0.0]), {}),
    "clip": (lambda x: tf.clip_by_value(x, -0.5, 0.7), lambda r, s: away(r, s, [-0.5, 0.7]), {"lo": -0.5, "hi": 0.7}),
    "relu": (tf.nn.relu, lambda r, s: away(r, s, [0.0]), {}),
    "relu6": (tf.nn.relu6, lambda r, s: away(r, s, [0.0, 6.0], scale=4.0), {}),
    # TF's LeakyRelu keeps alpha in a float32 attr, so Plumb gets that value.
    "leaky_relu": (lambda x: tf.nn.leaky_relu(x, alpha=0.2), lambda r, s: away(r, s, [0.0]),
                   {"alpha": float(np.float32(0.2))}),
    "elu": (tf.nn.elu, lambda r, s: away(r, s, [0.0]), {"alpha": 1.0}),
    "gelu": (lambda x: tf.nn.gelu(x, approximate=False), lambda r, s: r.standard_normal(s) * 2, {}),
    "gelu_tanh": (lambda x: tf.nn.gelu(x, approximate=True), lambda r, s: r.standard_normal(s) * 2, {}),
    "sigmoid": (tf.math.sigmoid, lambda r, s: r.standard_normal(s) * 3, {}),
    "tanh": (tf.math.tanh, lambda r, s: r.standard_normal(s) * 2, {}),
    "softplus": (tf.math.softplus, lambda r, s: r.standard_normal(s) * 4, {}),
    "swish": (tf.nn.silu, lambda r, s: r.standard_normal(s) * 2, {}),
    "erf": (tf.math.erf, lambda r, s: r.standard_normal(s) * 1.5, {}),
    "selu": (tf.nn.selu, lambda r, s: away(r, s, [0.0], scale=2.0), {}),
    # mish has no core TF op (tfa.activations.mish): its definition in TF ops.
    "mish": (lambda x: x * tf.math.tanh(tf.math.softplus(x)), lambda r, s: r.standard_normal(s) * 3, {}),
    # hard_swish as Keras and MobileNetV3 define it, kinks at -3 and 3.
    "hard_swish": (lambda x: x * tf.nn.relu6(x + 3.0) / 6.0, lambda r, s: away(r, s, [-3.0, 3.0], scale=3.0), {}),
}
UNARY_SHAPES = {"vec": (7,), "r2": (3, 5), "r3": (2, 3, 4)}

# tf.nn.gelu casts its Python constants (1/sqrt(2); sqrt(2/pi) and 0.044715)
# through float32 even for float64 inputs; see the "tf_gelu" tolerance class.
UNARY_TOL = {"gelu": "tf_gelu", "gelu_tanh": "tf_gelu"}

for op, (f, draw, attrs) in UNARY.items():
    for name, shape in UNARY_SHAPES.items():
        add(op, name, lambda rng, d=draw, s=shape: [d(rng, s)], lambda xs, f=f: f(xs[0]), attrs=attrs,
            tol=UNARY_TOL.get(op, "default"))
# gelu's approximate attribute, as tf.nn.gelu takes it (Plumb builds gelu_tanh);
# inputs of unit scale, as TF's float64 tanh form loses relative accuracy deep
# in the negative tail.
for name, shape in UNARY_SHAPES.items():
    add("gelu", "approximate_" + name, lambda rng, s=shape: [rng.standard_normal(s)],
        lambda xs: tf.nn.gelu(xs[0], approximate=True), attrs={"approximate": True}, tol="tf_gelu")
# elu with another alpha goes through Keras, since tf.nn.elu fixes alpha at 1.
add("elu", "alpha_0.5", lambda rng: [away(rng, (3, 5), [0.0])], lambda xs: keras_elu(0.5)(xs[0]), attrs={"alpha": 0.5})


# hard_sigmoid is ONNX HardSigmoid, max(0, min(1, alpha*x + beta)), written in
# TF ops; inputs stay off the kinks where alpha*x + beta is 0 or 1.
def hard_sigmoid(alpha, beta):
    return lambda xs: tf.maximum(0.0, tf.minimum(1.0, alpha * xs[0] + beta))


HARD_SIGMOID = {  # name: (alpha, beta, shape)
    "onnx_defaults": (0.2, 0.5, (3, 5)),
    "onnx_defaults_r3": (0.2, 0.5, (2, 3, 4)),
    "keras": (1.0 / 6.0, 0.5, (7,)),
    "negative_alpha": (-0.7, 0.1, (3, 5)),
}
for name, (alpha, beta, shape) in HARD_SIGMOID.items():
    kinks = [-beta / alpha, (1.0 - beta) / alpha]
    add("hard_sigmoid", name, lambda rng, s=shape, k=kinks: [away(rng, s, k, scale=3.0)], hard_sigmoid(alpha, beta),
        attrs={"alpha": alpha, "beta": beta})

# prelu is ONNX PRelu, max(0, x) + slope*min(0, x) with slope broadcast to x's
# shape; x is drawn off the kink at 0, and both gradients are recorded.
PRELU = {  # name: (x shape, slope shape)
    "same": ((3, 5), (3, 5)),
    "channel_nchw": ((2, 3, 4, 5), (3, 1, 1)),
    "last_axis": ((2, 3, 5), (5,)),
    "scalar_slope": ((3, 4), ()),
}
for name, (sx, ss) in PRELU.items():
    add("prelu", name, lambda rng, sx=sx, ss=ss: [away(rng, sx, [0.0]), rng.uniform(-0.5, 0.5, ss)],
        lambda xs: tf.maximum(0.0, xs[0]) + xs[1] * tf.minimum(0.0, xs[0]), grads=(0, 1))

# ---- matmul and linear -----------------------------------------------------

MATMUL = {
    "2d": ((3, 4), (4, 5), False, False),
    "trans_a": ((4, 3), (4, 5), True, False),
    "trans_b": ((3, 4), (5, 4), False, True),
    "trans_ab": ((4, 3), (5, 4), True, True),
    "batched": ((2, 3, 4), (2, 4, 5), False, False),
    "batched_trans_ab": ((2, 4, 3), (2, 5, 4), True, True),
    "batched_shared_b": ((2, 3, 4), (4, 5), False, False),
    "batch2x2": ((2, 2, 3, 4), (2, 2, 4, 2), False, False),
}
for name, (sa, sb, ta, tb) in MATMUL.items():
    add("matmul", name, inputs(normal(*sa), normal(*sb)),
        lambda xs, ta=ta, tb=tb: tf.linalg.matmul(xs[0], xs[1], transpose_a=ta, transpose_b=tb),
        attrs={"transpose_a": ta, "transpose_b": tb}, grads=(0, 1))

# NumPy/ONNX MatMul: batch dims broadcast (tf.linalg.matmul's BatchMatMulV2
# broadcasts them); 1-D operands are promoted and their axis dropped, which
# tf.linalg.matmul refuses, so those cases use tf.experimental.numpy.matmul.
MATMUL_BCAST = {
    "bcast_batch": ((2, 1, 3, 4), (3, 4, 5), False, False),
    "bcast_a": ((1, 3, 4), (2, 4, 5), False, False),
    "bcast_b_folded": ((2, 3, 4), (1, 4, 5), False, False),
    "bcast_trans_ab": ((3, 1, 4, 3), (1, 2, 5, 4), True, True),
    "bcast_a_2d": ((3, 4), (2, 2, 4, 5), False, False),
}
for name, (sa, sb, ta, tb) in MATMUL_BCAST.items():
    add("matmul", name, inputs(normal(*sa), normal(*sb)),
        lambda xs, ta=ta, tb=tb: tf.linalg.matmul(xs[0], xs[1], transpose_a=ta, transpose_b=tb),
        attrs={"transpose_a": ta, "transpose_b": tb}, grads=(0, 1))
MATMUL_VEC = {
    "vec_a": ((4,), (2, 4, 3)),
    "vec_b": ((2, 3, 4), (4,)),
    "vec_vec": ((5,), (5,)),
}
for name, (sa, sb) in MATMUL_VEC.items():
    add("matmul", name, inputs(normal(*sa), normal(*sb)), lambda xs: tf.experimental.numpy.matmul(xs[0], xs[1]),
        attrs={"transpose_a": False, "transpose_b": False}, grads=(0, 1))


def linear(xs):
    """Keras Dense without activation: x·W (+ b) over x's last axis, W [in, out]."""
    y = tf.tensordot(xs[0], xs[1], axes=[[len(xs[0].shape) - 1], [0]])
    return y + xs[2] if len(xs) == 3 else y


add("linear", "bias", inputs(normal(3, 4), normal(4, 5), normal(5)), linear, grads=(0, 1, 2))
add("linear", "no_bias", inputs(normal(3, 4), normal(4, 2)), linear, grads=(0, 1))
add("linear", "rank3", inputs(normal(2, 3, 4), normal(4, 5), normal(5)), linear, grads=(0, 1, 2))
add("linear", "single_row", inputs(normal(1, 6), normal(6, 3), normal(3)), linear, grads=(0, 1, 2))


def linear_concat(xs):
    """Dense over the concatenation of a and b along the last axis."""
    return linear([tf.concat([xs[0], xs[1]], -1)] + list(xs[2:]))


add("linear_concat", "bias", inputs(normal(3, 4), normal(3, 2), normal(6, 5), normal(5)), linear_concat, grads=(0, 1, 2, 3))
add("linear_concat", "no_bias", inputs(normal(4, 1), normal(4, 3), normal(4, 2)), linear_concat, grads=(0, 1, 2))
add("linear_concat", "rank3", inputs(normal(2, 3, 4), normal(2, 3, 3), normal(7, 5), normal(5)), linear_concat, grads=(0, 1, 2, 3))

# ---- reductions ------------------------------------------------------------

REDUCE = {
    "sum": tf.math.reduce_sum,
    "mean": tf.math.reduce_mean,
    "max": tf.math.reduce_max,
    "min": tf.math.reduce_min,
    "variance": tf.math.reduce_variance,
    "logsumexp": tf.math.reduce_logsumexp,
}
REDUCE_CASES = {
    "all": (None, False),
    "axis1": ([1], False),
    "axes02_keep": ([0, 2], True),
    "last_keep": ([-1], True),
    "axes01": ([0, 1], False),
}
for op, f in REDUCE.items():
    for name, (axes, keep) in REDUCE_CASES.items():
        add(op, name, lambda rng: [distinct(rng, (3, 4, 5))],
            lambda xs, f=f, axes=axes, keep=keep: f(xs[0], axis=axes, keepdims=keep),
            attrs={"axes": axes, "keepdims": keep})
add("logsumexp", "large", lambda rng: [distinct(rng, (3, 6), 500.0, 900.0)],
    lambda xs: tf.math.reduce_logsumexp(xs[0], axis=[1]), attrs={"axes": [1], "keepdims": False})

# ---- indexing and layout ---------------------------------------------------


def gather_make(pshape, idx):
    return lambda rng: [rng.standard_normal(pshape), idx]


add("gather", "axis0_repeats", gather_make((5, 3), np.array([4, 0, 2, 0], np.int32)),
    lambda xs: tf.gather(xs[0], xs[1], axis=0), attrs={"axis": 0})
add("gather", "axis1_int64_2d", gather_make((2, 5, 3), np.array([[1, 3, 1], [0, 4, 2]], np.int64)),
    lambda xs: tf.gather(xs[0], xs[1], axis=1), attrs={"axis": 1})
add("gather", "axis_neg1", gather_make((3, 4), np.array([3, 3, 1], np.int32)),
    lambda xs: tf.gather(xs[0], xs[1], axis=-1), attrs={"axis": -1})
add("gather", "scalar_index", gather_make((4, 3), np.array(2, np.int64)),
    lambda xs: tf.gather(xs[0], xs[1], axis=0), attrs={"axis": 0})


def from_end(idx, n):
    """ONNX's negative indices, which TF refuses, mapped to TF's: -1 is n-1."""
    idx = idx.numpy()
    return np.where(idx < 0, idx + n, idx)


add("gather", "negative_nd_axis2", gather_make((2, 3, 5, 2), np.array([[-1, 0], [3, -5], [-2, -2]], np.int64)),
    lambda xs: tf.gather(xs[0], from_end(xs[1], 5), axis=2), attrs={"axis": 2})


# ONNX GatherElements, written from tf.gather_nd: every output position's
# full coordinates, with its axis coordinate replaced by the index there.
def gather_elements(axis):
    def fn(xs):
        ax = axis % len(xs[0].shape)
        idx = from_end(xs[1], xs[0].shape[ax])
        grid = list(np.meshgrid(*[np.arange(n) for n in idx.shape], indexing="ij"))
        grid[ax] = idx
        return tf.gather_nd(xs[0], np.stack(grid, -1))

    return fn


GATHER_ELEMENTS = {  # name: (data shape, indices shape, axis)
    "axis0": ((3, 4), (5, 4), 0),
    "axis1_shorter": ((2, 4, 3), (2, 6, 2), 1),
    "last": ((2, 3, 5), (2, 3, 5), -1),
}
for name, (sd, si, axis) in GATHER_ELEMENTS.items():
    n = sd[axis]
    add("gather_elements", name,
        lambda rng, sd=sd, si=si, n=n: [rng.standard_normal(sd), rng.integers(-n, n, si).astype(np.int64)],
        gather_elements(axis), attrs={"axis": axis})


# ONNX ScatterND with reduction none and add: tf.tensor_scatter_nd_update
# and tf.tensor_scatter_nd_add (negative coordinates mapped as above).
def scatter_nd(reduction):
    f = {"none": tf.tensor_scatter_nd_update, "add": tf.tensor_scatter_nd_add}[reduction]

    def fn(xs):
        dims = np.array(xs[0].shape[:xs[1].shape[-1]])
        return f(xs[0], from_end(xs[1], dims), xs[2])

    return fn


SCATTER_ND = {  # name: (data shape, indices, reduction)
    "none_rows": ((5, 3), [[4], [-5], [2]], "none"),
    "none_elements": ((3, 4, 2), [[[2, 0, 1], [0, -1, 0]], [[1, 1, 1], [-1, 3, 1]]], "none"),
    "none_blocks": ((2, 3, 4), [[1, -3], [0, 2]], "none"),
    "add_repeats": ((4, 3), [[1], [3], [1], [-3]], "add"),
}
for name, (sd, idx, red) in SCATTER_ND.items():
    idx = np.array(idx, np.int64)
    su = idx.shape[:-1] + sd[idx.shape[-1]:]
    add("scatter_nd", name, lambda rng, sd=sd, idx=idx, su=su: [rng.standard_normal(sd), idx, rng.standard_normal(su)],
        scatter_nd(red), attrs={"scatter_reduction": red}, grads=(0, 2))

# cumsum: tf.math.cumsum with its exclusive and reverse flags (ONNX
# CumSum's attributes), on odd shapes and a negative axis.
CUMSUM = {  # name: (shape, axis, exclusive, reverse)
    "axis0": ((7, 3), 0, False, False),
    "exclusive": ((2, 5, 3), 1, True, False),
    "reverse": ((3, 4, 5), -1, False, True),
    "exclusive_reverse": ((2, 3, 9), -2, True, True),
}
for name, (shape, axis, excl, rev) in CUMSUM.items():
    add("cumsum", name, inputs(normal(*shape)),
        lambda xs, axis=axis, excl=excl, rev=rev: tf.math.cumsum(xs[0], axis=axis, exclusive=excl, reverse=rev),
        attrs={"axis": axis, "exclusive": excl, "reverse": rev})


# gather_nd: tf.gather_nd with batch_dims (negative coordinates, which TF
# refuses, mapped as for gather); repeated rows test the gradient's sum.
GATHER_ND = {  # name: (data shape, indices, batch_dims)
    "rows": ((5, 3), [[4], [-5], [2], [4]], 0),
    "elements": ((3, 4, 2), [[[2, 0, 1], [0, -1, 0]], [[1, 1, 1], [2, 3, 1]]], 0),
    "blocks": ((2, 3, 4), [[1, -3], [0, 2], [1, 1]], 0),
    "batch1": ((3, 4, 5), [[[1], [3]], [[0], [0]], [[-1], [2]]], 1),
    "batch2": ((2, 3, 4, 2), [[[[1], [2]], [[3], [0]], [[0], [-1]]], [[[2], [2]], [[1], [0]], [[3], [1]]]], 2),
}
for name, (sd, idx, bd) in GATHER_ND.items():
    idx = np.array(idx, np.int64)
    dims = np.array(sd[bd:bd + idx.shape[-1]])
    add("gather_nd", name, lambda rng, sd=sd, idx=idx: [rng.standard_normal(sd), idx],
        lambda xs, bd=bd, dims=dims: tf.gather_nd(xs[0], from_end(xs[1], dims), batch_dims=bd),
        attrs={"batch_dims": bd})


# Embedding: tf.nn.embedding_lookup; Plumb's padding index (PyTorch's and
# Paddle's padding_idx, which TF lacks) zeroes its rows, mapped here as a mask.


def embedding(pad):
    def fn(xs):
        y = tf.nn.embedding_lookup(xs[0], xs[1])
        if pad < 0:
            return y
        return y * tf.expand_dims(tf.cast(tf.not_equal(xs[1], pad), y.dtype), -1)

    return fn


add("embedding", "no_padding", gather_make((6, 3), np.array([[1, 5, 1], [0, 2, 5]], np.int32)), embedding(-1),
    attrs={"padding_idx": -1})
add("embedding", "padding_idx", gather_make((5, 4), np.array([0, 3, 0, 4, 3, 1], np.int64)), embedding(0),
    attrs={"padding_idx": 0})


def where_make(sc, sa, sb):
    return lambda rng: [(rng.uniform(size=sc) < 0.5).astype(np.int32), rng.standard_normal(sa), rng.standard_normal(sb)]


def where_fn(xs):
    return tf.where(tf.not_equal(xs[0], 0), xs[1], xs[2])


add("where", "same", where_make((3, 4), (3, 4), (3, 4)), where_fn, grads=(1, 2))
add("where", "bcast", where_make((3, 1), (4,), (3, 4)), where_fn, grads=(1, 2))
add("where", "bcast_cond", where_make((4,), (3, 4), ()), where_fn, grads=(1, 2))
add("where", "attention_mask_rank4", where_make((2, 1, 1, 4), (2, 3, 4, 4), ()), where_fn, grads=(1, 2))

add("reshape", "flatten_lead", inputs(normal(2, 3, 4)), lambda xs: tf.reshape(xs[0], [6, 4]), attrs={"shape": [6, 4]})
add("reshape", "infer", inputs(normal(2, 3, 4)), lambda xs: tf.reshape(xs[0], [4, -1]), attrs={"shape": [4, -1]})
add("reshape", "add_axes", inputs(normal(6)), lambda xs: tf.reshape(xs[0], [1, 2, 3, 1]), attrs={"shape": [1, 2, 3, 1]})

add("broadcast_to", "row", inputs(normal(1, 5)), lambda xs: tf.broadcast_to(xs[0], [4, 5]), attrs={"shape": [4, 5]})
add("broadcast_to", "column_and_lead", inputs(normal(3, 1)), lambda xs: tf.broadcast_to(xs[0], [2, 3, 4]),
    attrs={"shape": [2, 3, 4]})
add("broadcast_to", "middle", inputs(normal(2, 1, 3)), lambda xs: tf.broadcast_to(xs[0], [2, 5, 3]),
    attrs={"shape": [2, 5, 3]})

add("transpose", "2d", inputs(normal(3, 4)), lambda xs: tf.transpose(xs[0], [1, 0]), attrs={"perm": [1, 0]})
add("transpose", "rank3", inputs(normal(2, 3, 4)), lambda xs: tf.transpose(xs[0], [2, 0, 1]), attrs={"perm": [2, 0, 1]})
add("transpose", "reverse", inputs(normal(2, 3, 4)), lambda xs: tf.transpose(xs[0]), attrs={"perm": []})
add("transpose", "nchw_nhwc", inputs(normal(2, 3, 2, 2)), lambda xs: tf.transpose(xs[0], [0, 2, 3, 1]),
    attrs={"perm": [0, 2, 3, 1]})

add("concat", "axis0", inputs(normal(2, 3), normal(1, 3), normal(3, 3)), lambda xs: tf.concat(xs, 0),
    attrs={"axis": 0}, grads=(0, 1, 2))
add("concat", "axis1_rank3", inputs(normal(2, 1, 4), normal(2, 3, 4)), lambda xs: tf.concat(xs, 1),
    attrs={"axis": 1}, grads=(0, 1))
add("concat", "axis_neg1", inputs(normal(3, 2), normal(3, 4)), lambda xs: tf.concat(xs, -1),
    attrs={"axis": -1}, grads=(0, 1))

add("slice", "axis1", inputs(normal(3, 5)), lambda xs: tf.slice(xs[0], [0, 1], [3, 2]),
    attrs={"axis": 1, "begin": 1, "end": 3})
add("slice", "axis0_rank3", inputs(normal(4, 2, 3)), lambda xs: tf.slice(xs[0], [2, 0, 0], [2, 2, 3]),
    attrs={"axis": 0, "begin": 2, "end": 4})
add("slice", "last_axis", inputs(normal(2, 3, 4)), lambda xs: tf.slice(xs[0], [0, 0, 0], [2, 3, 1]),
    attrs={"axis": -1, "begin": 0, "end": 1})

# ---- softmax and losses ----------------------------------------------------

for op, f in (("softmax", tf.nn.softmax), ("log_softmax", tf.nn.log_softmax)):
    add(op, "last", inputs(normal(3, 5)), lambda xs, f=f: f(xs[0], axis=-1), attrs={"axis": -1})
    add(op, "axis1_rank3", inputs(normal(2, 3, 4)), lambda xs, f=f: f(xs[0], axis=1), attrs={"axis": 1})
    add(op, "axis0", inputs(normal(4, 3)), lambda xs, f=f: f(xs[0], axis=0), attrs={"axis": 0})
    add(op, "large_logits", lambda rng: [rng.standard_normal((3, 5)) * 40 + 1000], lambda xs, f=f: f(xs[0], axis=-1),
        attrs={"axis": -1})

REDUCTIONS = {"mean": tf.math.reduce_mean, "sum": tf.math.reduce_sum, "none": lambda v: v}


def sparse_xent(red):
    return lambda xs: REDUCTIONS[red](tf.nn.sparse_softmax_cross_entropy_with_logits(labels=xs[1], logits=xs[0]))


def soft_xent(red):
    return lambda xs: REDUCTIONS[red](tf.nn.softmax_cross_entropy_with_logits(labels=xs[1], logits=xs[0]))


def sigmoid_xent(red):
    return lambda xs: REDUCTIONS[red](tf.nn.sigmoid_cross_entropy_with_logits(labels=xs[1], logits=xs[0]))


def mse(red):
    return lambda xs: REDUCTIONS[red](tf.math.square(xs[0] - xs[1]))


def soft_labels(rng, shape):
    e = np.exp(rng.standard_normal(shape))
    return e / e.sum(axis=-1, keepdims=True)


for red in REDUCTIONS:
    add("softmax_cross_entropy", red,
        lambda rng: [rng.standard_normal((4, 5)) * 2, rng.integers(0, 5, 4).astype(np.int32)],
        sparse_xent(red), attrs={"reduction": red})
    add("softmax_cross_entropy_soft", red, lambda rng: [rng.standard_normal((4, 5)) * 2, soft_labels(rng, (4, 5))],
        soft_xent(red), attrs={"reduction": red}, grads=(0, 1))
    add("sigmoid_cross_entropy", red, lambda rng: [rng.standard_normal((3, 4)) * 3, rng.uniform(0, 1, (3, 4))],
        sigmoid_xent(red), attrs={"reduction": red}, grads=(0, 1))
    add("mse", red, inputs(normal(3, 4), normal(3, 4)), mse(red), attrs={"reduction": red}, grads=(0, 1))
add("softmax_cross_entropy", "large_logits_int64",
    lambda rng: [rng.standard_normal((3, 6)) * 30 + 800, rng.integers(0, 6, 3).astype(np.int64)],
    sparse_xent("mean"), attrs={"reduction": "mean"})
add("softmax_cross_entropy_soft", "large_logits",
    lambda rng: [rng.standard_normal((3, 6)) * 30 - 800, soft_labels(rng, (3, 6))],
    soft_xent("sum"), attrs={"reduction": "sum"}, grads=(0, 1))
add("sigmoid_cross_entropy", "large_logits",
    lambda rng: [rng.standard_normal((2, 5)) * 40, rng.uniform(0, 1, (2, 5))],
    sigmoid_xent("mean"), attrs={"reduction": "mean"}, grads=(0, 1))
add("mse", "vector", inputs(normal(7), normal(7)), mse("mean"), attrs={"reduction": "mean"}, grads=(0, 1))


# linear_softmax_cross_entropy: mean sparse softmax cross-entropy of x @ W + b
# over the rows whose label is not negative (ops/linear_xent.go).
def linear_xent(xs):
    keep = xs[3].numpy() >= 0
    logits = tf.boolean_mask(tf.matmul(xs[0], xs[1]) + xs[2], keep)
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=xs[3].numpy()[keep], logits=logits))


def linear_xent_make(n, d, v, ignored):
    def make(rng):
        labels = rng.integers(0, v, n).astype(np.int64)
        labels[list(ignored)] = -1
        return [rng.standard_normal((n, d)), rng.standard_normal((d, v)), rng.standard_normal(v), labels]

    return make


add("linear_softmax_cross_entropy", "chunks_of_2_padded", linear_xent_make(7, 4, 6, [2, 6]), linear_xent,
    attrs={"chunk_rows": 2}, grads=(0, 1, 2))
add("linear_softmax_cross_entropy", "one_chunk", linear_xent_make(5, 3, 9, []), linear_xent, grads=(0, 1, 2))

# ---- normalisation and dropout ---------------------------------------------


def batch_norm(momentum, epsilon, training):
    """Keras BatchNormalization over axis 1 with the inputs as its weights."""

    def fn(xs):
        layer = keras.layers.BatchNormalization(axis=1, momentum=momentum, epsilon=epsilon, dtype=xs[0].dtype.name)
        layer.build(xs[0].shape)
        layer.set_weights([v.numpy() for v in xs[1:]])
        y = layer(xs[0], training=training)
        extras = {3: layer.moving_mean.numpy(), 4: layer.moving_variance.numpy()} if training else {}
        return y, {1: layer.gamma, 2: layer.beta}, extras

    return fn


def bn_make(shape):
    c = shape[1]
    return lambda rng: [rng.standard_normal(shape) * 2 + 0.5, rng.uniform(0.5, 1.5, c), rng.standard_normal(c),
                        rng.standard_normal(c) * 0.3, rng.uniform(0.5, 2.0, c)]


for name, shape, training in (("train_nchw", (4, 3, 2, 3), True), ("infer_nchw", (4, 3, 2, 3), False),
                              ("train_2d", (6, 4), True), ("infer_2d", (6, 4), False)):
    add("batch_norm", name, bn_make(shape), batch_norm(0.9, 1e-3, training),
        attrs={"momentum": 0.9, "epsilon": 1e-3, "training": training}, grads=(0, 1, 2))
add("batch_norm", "train_keras_defaults", bn_make((5, 2, 3, 3)), batch_norm(0.99, 1e-3, True),
    attrs={"momentum": 0.99, "epsilon": 1e-3, "training": True}, grads=(0, 1, 2))


def layer_norm(axes, epsilon):
    def fn(xs):
        rank = len(xs[0].shape)
        axis = list(range(rank - axes, rank))
        layer = keras.layers.LayerNormalization(axis=axis, epsilon=epsilon, dtype=xs[0].dtype.name)
        layer.build(xs[0].shape)
        layer.set_weights([xs[1].numpy(), xs[2].numpy()])
        return layer(xs[0]), {1: layer.gamma, 2: layer.beta}, {}

    return fn


def ln_make(shape, axes):
    norm = shape[len(shape) - axes:]
    return lambda rng: [rng.standard_normal(shape) * 2 + 1, rng.uniform(0.5, 1.5, norm), rng.standard_normal(norm)]


add("layer_norm", "last", ln_make((4, 6), 1), layer_norm(1, 1e-3), attrs={"norm_axes": 1, "epsilon": 1e-3}, grads=(0, 1, 2))
add("layer_norm", "rank3_last", ln_make((2, 3, 5), 1), layer_norm(1, 1e-5), attrs={"norm_axes": 1, "epsilon": 1e-5},
    grads=(0, 1, 2))
add("layer_norm", "last_two", ln_make((2, 3, 4), 2), layer_norm(2, 1e-3), attrs={"norm_axes": 2, "epsilon": 1e-3},
    grads=(0, 1, 2))


def rms_norm(epsilon):
    def fn(xs):
        layer = keras.layers.RMSNormalization(axis=-1, epsilon=epsilon, dtype=xs[0].dtype.name)
        layer.build(xs[0].shape)
        layer.set_weights([xs[1].numpy()])
        return layer(xs[0]), {1: layer.scale}, {}

    return fn


add("rms_norm", "last", lambda rng: ln_make((4, 6), 1)(rng)[:2], rms_norm(1e-6),
    attrs={"epsilon": 1e-6}, grads=(0, 1))
add("rms_norm", "rank3", lambda rng: ln_make((2, 3, 5), 1)(rng)[:2], rms_norm(1e-3), attrs={"epsilon": 1e-3}, grads=(0, 1))

# Group normalisation (PyTorch GroupNorm, ONNX GroupNormalization at opset
# 21: per-channel scale and bias) and instance normalisation (ONNX
# InstanceNormalization, group normalisation with a group per channel).
# TF has neither op for NCHW with per-channel affine weights, so both are
# written from TF ops: tf.nn.moments over each (sample, group) block, then
# scale and bias broadcast along axis 1.
def group_norm(groups, epsilon):
    def fn(xs):
        x, scale, bias = xs
        n, c = x.shape[0], x.shape[1]
        xg = tf.reshape(x, [n, c if groups is None else groups, -1])
        mean, var = tf.nn.moments(xg, axes=[2], keepdims=True)
        y = tf.reshape((xg - mean) * tf.math.rsqrt(var + epsilon), x.shape)
        along = [1, c] + [1] * (len(x.shape) - 2)
        return y * tf.reshape(scale, along) + tf.reshape(bias, along)

    return fn


GROUP_NORM = {  # name: (x shape, groups, epsilon)
    "nchw_2groups": ((2, 4, 3, 3), 2, 1e-5),
    "per_channel": ((2, 3, 5), 3, 1e-5),
    "one_group_rank2": ((3, 6), 1, 1e-5),
    "ncdhw_4groups": ((1, 8, 2, 3, 2), 4, 1e-3),
}
for name, (sx, g, eps) in GROUP_NORM.items():
    add("group_norm", name, inputs(normal(*sx), normal(sx[1]), normal(sx[1])), group_norm(g, eps),
        attrs={"num_groups": g, "epsilon": eps}, grads=(0, 1, 2))
INSTANCE_NORM = {  # name: (x shape, epsilon)
    "nchw": ((2, 3, 4, 4), 1e-5),
    "ncl": ((3, 2, 7), 1e-5),
    "ncdhw": ((1, 2, 3, 2, 2), 1e-3),
}
for name, (sx, eps) in INSTANCE_NORM.items():
    add("instance_norm", name, inputs(normal(*sx), normal(sx[1]), normal(sx[1])), group_norm(None, eps),
        attrs={"epsilon": eps}, grads=(0, 1, 2))


# Dropout draws its mask from TF's stateless RNG, which Plumb cannot
# reproduce; the Go side compares only where both masks keep an element,
# which checks the inverted scaling of the output and of the gradient. The
# mask is drawn per dtype, so a float64 run is no truth for a float32 case.
add("dropout", "rate0", inputs(normal(3, 4)), lambda xs: tf.nn.experimental.stateless_dropout(xs[0], rate=0.0, seed=[1, 2]), attrs={"rate": 0.0},
    truth=False)
add("dropout", "rate0.5", inputs(normal(4, 6)),
    lambda xs: tf.nn.experimental.stateless_dropout(xs[0], rate=0.5, seed=[7, 11]), attrs={"rate": 0.5},
    truth=False)
add("dropout", "rate0.2", inputs(normal(2, 3, 5)),
    lambda xs: tf.nn.experimental.stateless_dropout(xs[0], rate=0.2, seed=[3, 5]), attrs={"rate": 0.2},
    truth=False)

# ---- convolutions and pools -------------------------------------------------
# Plumb is NCHW with OIHW conv weights and [C, O/groups, KH, KW] transposed
# conv weights; TF's CPU kernels want NHWC with HWIO filters (HW, out, in for
# the transposed conv), so each case function transposes in and back.


def nhwc(x):
    return tf.transpose(x, [0, 2, 3, 1])


def nchw(y):
    return tf.transpose(y, [0, 3, 1, 2])


def tf_padding(padding, pads):
    if padding == "EXPLICIT":
        return [[0, 0], [pads[0], pads[1]], [pads[2], pads[3]], [0, 0]]
    return padding


def add_bias(y, xs):
    return y + tf.reshape(xs[2], [1, -1, 1, 1]) if len(xs) == 3 else y


def conv2d(strides, padding, pads, dilations, groups):
    def one(x, w):
        w = tf.transpose(w, [2, 3, 1, 0])  # OIHW -> HWIO
        if dilations != (1, 1):
            # TF's CPU Conv2DBackpropInput has no dilation, so dilated cases go
            # through tf.nn.convolution, which runs them via space_to_batch.
            return tf.nn.convolution(x, w, strides, padding, dilations=dilations)
        return tf.nn.conv2d(x, w, strides, tf_padding(padding, pads))

    def fn(xs):
        # TF's CPU kernels have no gradient for grouped convolutions, so run
        # each group's channels on their own and concatenate, as grouping
        # defines it (input group g feeds output group g).
        ys = [one(nhwc(x), w) for x, w in zip(tf.split(xs[0], groups, axis=1), tf.split(xs[1], groups, axis=0))]
        return add_bias(nchw(tf.concat(ys, axis=3)), xs)

    return fn


def depthwise(strides, padding, dilations):
    def fn(xs):
        c, kh, kw = xs[0].shape[1], xs[1].shape[2], xs[1].shape[3]
        # [C*mult, 1, KH, KW] -> [KH, KW, C, mult]: Plumb's output channel c*mult+m is TF's.
        w = tf.transpose(tf.reshape(xs[1], [c, -1, kh, kw]), [2, 3, 0, 1])
        y = tf.nn.depthwise_conv2d(nhwc(xs[0]), w, [1, strides[0], strides[1], 1], padding, dilations=dilations)
        return add_bias(nchw(y), xs)

    return fn


def conv_attrs(strides, padding, pads, dilations, groups):
    a = {"strides": list(strides), "padding": padding, "dilations": list(dilations), "groups": groups}
    if padding == "EXPLICIT":
        a["pads"] = list(pads)
    return a


CONV = {
    # name: x shape, w shape (OIHW), strides, padding, pads, dilations, groups, bias
    "s1_same": ((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), "SAME", None, (1, 1), 1, True),
    "s1_valid": ((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), "VALID", None, (1, 1), 1, True),
    "s2_same_even": ((2, 3, 6, 6), (4, 3, 3, 3), (2, 2), "SAME", None, (1, 1), 1, True),
    "s2_same_odd": ((1, 2, 7, 5), (3, 2, 3, 3), (2, 2), "SAME", None, (1, 1), 1, True),
    "s2_valid": ((2, 3, 7, 7), (4, 3, 3, 3), (2, 2), "VALID", None, (1, 1), 1, True),
    "explicit": ((2, 3, 5, 6), (4, 3, 3, 3), (1, 2), "EXPLICIT", (1, 2, 0, 1), (1, 1), 1, True),
    "dilation2_same": ((1, 3, 7, 7), (2, 3, 3, 3), (1, 1), "SAME", None, (2, 2), 1, True),
    "dilation2_valid": ((2, 2, 7, 6), (3, 2, 3, 2), (1, 1), "VALID", None, (2, 2), 1, False),
    "groups2": ((2, 4, 5, 5), (6, 2, 3, 3), (1, 1), "SAME", None, (1, 1), 2, True),
    "pointwise_1x1": ((2, 5, 4, 4), (3, 5, 1, 1), (1, 1), "VALID", None, (1, 1), 1, True),
    "k5_s2": ((1, 2, 9, 9), (3, 2, 5, 5), (2, 2), "SAME", None, (1, 1), 1, True),
    "k4_even_same": ((1, 2, 6, 6), (2, 2, 4, 4), (1, 1), "SAME", None, (1, 1), 1, False),
    "rect": ((2, 2, 6, 7), (3, 2, 2, 3), (2, 1), "VALID", None, (1, 1), 1, False),
    # 3x3 stride 1 with 16+ channels, multiples of 8: Plumb's float32 runs them by Winograd
    "winograd_same": ((2, 16, 9, 7), (16, 16, 3, 3), (1, 1), "SAME", None, (1, 1), 1, True),
    "winograd_explicit": ((2, 24, 6, 5), (32, 24, 3, 3), (1, 1), "EXPLICIT", (2, 0, 1, 2), (1, 1), 1, True),
}
for name, (sx, sw, st, padding, pads, dil, groups, bias) in CONV.items():
    shapes = [sx, sw] + ([(sw[0],)] if bias else [])
    # Long float32 dot products (up to 216 terms) keep the default tolerance:
    # the harness holds float32 cases to their float64 truth, within 1.5 x
    # TF's own error (docs/parity.md, "Against the float64 truth").
    add("conv2d", name, inputs(*[normal(*s) for s in shapes]), conv2d(st, padding, pads, dil, groups),
        attrs=conv_attrs(st, padding, pads, dil, groups), grads=range(len(shapes)))
for name, (sx, mult, st, padding, dil) in {"depthwise_same": ((2, 3, 5, 5), 2, (1, 1), "SAME", (1, 1)),
                                           "depthwise_s2": ((1, 4, 6, 6), 1, (2, 2), "SAME", (1, 1)),
                                           "depthwise_dilation2": ((1, 2, 7, 7), 1, (1, 1), "VALID", (2, 2))}.items():
    sw = (sx[1] * mult, 1, 3, 3)
    add("conv2d", name, inputs(normal(*sx), normal(*sw), normal(sw[0])), depthwise(st, padding, dil),
        attrs=conv_attrs(st, padding, None, dil, sx[1]), grads=(0, 1, 2))


def conv2d_transpose(strides, padding, pads, groups, out_pad):
    def fn(xs):
        x, w = xs[0], xs[1]
        n, h, wd = x.shape[0], x.shape[2], x.shape[3]
        kh, kw, o = w.shape[2], w.shape[3], w.shape[1] * groups
        if padding == "SAME":
            oh, ow = h * strides[0], wd * strides[1]
        else:
            p = pads or (0, 0, 0, 0)
            oh = (h - 1) * strides[0] - p[0] - p[1] + kh + out_pad[0]
            ow = (wd - 1) * strides[1] - p[2] - p[3] + kw + out_pad[1]
        # Groups: TF's CPU transposed conv has none, so run each group's
        # channels on their own and concatenate, as grouping defines it.
        ys = []
        for xg, wg in zip(tf.split(x, groups, axis=1), tf.split(w, groups, axis=0)):
            f = tf.transpose(wg, [2, 3, 1, 0])  # [C/g, O/g, KH, KW] -> [KH, KW, O/g, C/g]
            ys.append(tf.nn.conv2d_transpose(nhwc(xg), f, [n, oh, ow, o // groups], strides,
                                             tf_padding(padding, pads)))
        return add_bias(nchw(tf.concat(ys, axis=3)), xs)

    return fn


CONV_T = {
    # name: x shape, w shape ([C, O/groups, KH, KW]), strides, padding, pads, groups, output padding, bias
    "s2_same": ((2, 3, 3, 3), (3, 4, 3, 3), (2, 2), "SAME", None, 1, (0, 0), True),
    "s1_same": ((2, 3, 4, 4), (3, 2, 3, 3), (1, 1), "SAME", None, 1, (0, 0), True),
    "s2_valid": ((2, 3, 3, 3), (3, 4, 3, 3), (2, 2), "VALID", None, 1, (0, 0), True),
    "s2_valid_outpad": ((1, 2, 3, 4), (2, 3, 3, 3), (2, 2), "VALID", None, 1, (1, 1), True),
    "explicit": ((2, 3, 3, 3), (3, 2, 3, 3), (2, 2), "EXPLICIT", (1, 1, 0, 1), 1, (0, 0), True),
    "k4_s2_same": ((1, 2, 3, 3), (2, 3, 4, 4), (2, 2), "SAME", None, 1, (0, 0), False),
    "groups2": ((2, 4, 3, 3), (4, 3, 3, 3), (2, 2), "SAME", None, 2, (0, 0), True),
    "rect": ((1, 3, 2, 3), (3, 2, 2, 3), (2, 1), "VALID", None, 1, (0, 0), False),
}
for name, (sx, sw, st, padding, pads, groups, opad, bias) in CONV_T.items():
    shapes = [sx, sw] + ([(sw[1] * groups,)] if bias else [])
    attrs = conv_attrs(st, padding, pads, (1, 1), groups)
    attrs["output_padding"] = list(opad)
    add("conv2d_transpose", name, inputs(*[normal(*s) for s in shapes]),
        conv2d_transpose(st, padding, pads, groups, opad), attrs=attrs, grads=range(len(shapes)))


def pool(kind, kernel, strides, padding, pads):
    def fn(xs):
        x = nhwc(xs[0])
        if padding == "EXPLICIT":  # max only: padded cells are -inf, so they never win
            x = tf.pad(x, tf_padding(padding, pads), constant_values=-np.inf)
        f = tf.nn.max_pool2d if kind == "max" else tf.nn.avg_pool2d
        return nchw(f(x, kernel, strides, "VALID" if padding == "EXPLICIT" else padding))

    return fn


POOL = {
    # name: x shape, kernel, strides, padding, pads
    "k2_s2_valid": ((2, 3, 4, 4), (2, 2), (2, 2), "VALID", None),
    "k3_s2_same": ((2, 2, 5, 5), (3, 3), (2, 2), "SAME", None),
    "k3_s1_same": ((1, 2, 4, 5), (3, 3), (1, 1), "SAME", None),
    "k3_s2_valid_overlap": ((1, 3, 7, 7), (3, 3), (2, 2), "VALID", None),
    "k2_s2_same_odd": ((2, 2, 5, 3), (2, 2), (2, 2), "SAME", None),
    "rect": ((1, 2, 6, 5), (2, 3), (2, 1), "VALID", None),
}
for kind in ("max", "avg"):
    for name, (sx, k, st, padding, pads) in POOL.items():
        attrs = {"kernel": list(k), "strides": list(st), "padding": padding}
        add(f"{kind}_pool2d", name, lambda rng, sx=sx: [distinct(rng, sx)], pool(kind, k, st, padding, pads),
            attrs=attrs)
add("max_pool2d", "explicit", lambda rng: [distinct(rng, (1, 2, 5, 5))], pool("max", (3, 3), (2, 2), "EXPLICIT",
                                                                              (1, 1, 0, 1)),
    attrs={"kernel": [3, 3], "strides": [2, 2], "padding": "EXPLICIT", "pads": [1, 1, 0, 1]})
add("global_avg_pool2d", "nchw", inputs(normal(2, 3, 4, 5)), lambda xs: tf.reduce_mean(xs[0], axis=[2, 3]))
add("global_avg_pool2d", "one_pixel", inputs(normal(3, 2, 1, 1)), lambda xs: tf.reduce_mean(xs[0], axis=[2, 3]))


# ---- ONNX pools: dilated, ceil-mode, count_include_pad; 3-D pools -----------
# ONNX MaxPool/AveragePool (opset 19) over 2 or 3 spatial axes, composed from
# TF ops: pad explicitly (-inf for max, zeros for avg; ceil mode adds the
# trailing cells its last window runs past), pool the windows, keep every
# stride-th. The average is the window sum over a count pooled the same way
# from a mask: ones on the input, and with count_include_pad also on the
# explicit padding (never on the ceil-mode overhang). Output sizes follow
# ops/pool_window.go (PyTorch's pooling_output_shape).
#
# 2-D windows are tf.nn.pool with the dilations at stride 1 (TF takes no
# stride with a dilation), the sum AVG x taps. TF's 3-D pools have no
# float64 kernel, so 3-D windows are the max or sum over the window's taps
# as strided slices (the pooling definition in TF ops); in float32 the
# recorder asserts that they equal tf.nn.pool's (MaxPool3D, AvgPool3D).


def onnx_out(n, k, s, d, lo, hi, ceil):
    span = n + lo + hi - ((k - 1) * d + 1)
    if not ceil:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= n + lo else out


def tf_same_pads(sp, kernel, strides, dilations):
    """TF's SAME padding per axis, (begin, end), the odd cell at the end."""
    pads = []
    for n, k, s, d in zip(sp, kernel, strides, dilations):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


def onnx_pool(kind, kernel, strides, dilations, pads, ceil, incl):
    """pads: (begin, end) per spatial axis, or "SAME"/"VALID"."""
    def fn(xs):
        x = xs[0]
        n = len(kernel)
        x = tf.transpose(x, [0] + list(range(2, n + 2)) + [1])  # NC... -> N...C
        sp = x.shape[1:-1]
        pd = {"VALID": [(0, 0)] * n, "SAME": None}.get(pads, pads) if isinstance(pads, str) else pads
        pd = tf_same_pads(sp, kernel, strides, dilations) if pd is None else pd
        outs = [onnx_out(sp[i], kernel[i], strides[i], dilations[i], pd[i][0], pd[i][1], ceil) for i in range(n)]
        extra = [max((outs[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
                     - (sp[i] + pd[i][0] + pd[i][1]), 0) for i in range(n)]
        full = [[0, 0]] + [[pd[i][0], pd[i][1] + extra[i]] for i in range(n)] + [[0, 0]]
        taps = float(np.prod(kernel))

        def by_pool(v, how):
            y = tf.nn.pool(v, list(kernel), "MAX" if how == "max" else "AVG", padding="VALID", dilations=list(dilations))
            y = y[(slice(None),) + tuple(slice(0, outs[i] * strides[i], strides[i]) for i in range(n)) + (slice(None),)]
            return y if how == "max" else y * taps

        def by_taps(v, how):
            parts = [v[(slice(None),) + tuple(slice(t[i] * dilations[i], t[i] * dilations[i] + (outs[i] - 1) * strides[i] + 1,
                                                    strides[i]) for i in range(n)) + (slice(None),)]
                     for t in itertools.product(*[range(k) for k in kernel])]
            return tf.reduce_max(tf.stack(parts), 0) if how == "max" else tf.add_n(parts)

        def pooled(v, how):
            if n == 2:
                return by_pool(v, how)
            y = by_taps(v, how)
            if v.dtype == tf.float32:
                np.testing.assert_allclose(y.numpy(), by_pool(v, how).numpy(), rtol=1e-6, atol=1e-6)
            return y

        if kind == "max":
            y = pooled(tf.pad(x, full, constant_values=-np.inf), "max")
        else:
            total = pooled(tf.pad(x, full), "avg")
            ones = np.ones(x.shape, x.dtype.as_numpy_dtype)
            if incl:
                mask = np.pad(ones, [[0, 0]] + [list(p) for p in pd] + [[0, 0]], constant_values=1)
                mask = np.pad(mask, [[0, 0]] + [[0, e] for e in extra] + [[0, 0]])
            else:
                mask = np.pad(ones, full)
            y = total / tf.round(pooled(tf.constant(mask), "avg"))
        return tf.transpose(y, [0, n + 1] + list(range(1, n + 1)))  # N...C -> NC...

    return fn


def onnx_pool_attrs(kernel, strides, dilations, pads, ceil, incl):
    n = len(kernel)
    padding = pads if isinstance(pads, str) else "EXPLICIT"
    if n == 2:
        a = {"kernel": list(kernel), "strides": list(strides), "dilations": list(dilations), "padding": padding}
        if padding == "EXPLICIT":
            a["pads"] = [pads[0][0], pads[0][1], pads[1][0], pads[1][1]]
    else:
        a = {"kernel_dhw": list(kernel), "strides_dhw": list(strides), "dilations_dhw": list(dilations),
             "padding": padding}
        if padding == "EXPLICIT":
            a["pads_dhw"] = [p for pr in pads for p in pr]
    if ceil:
        a["ceil_mode"] = True
    if incl:
        a["count_include_pad"] = True
    return a


def tf_pool3d_check(kind, kernel, strides, padding):
    """The 3-D pool by onnx_pool, asserted in float32 against tf.nn.max_pool3d or avg_pool3d."""
    pool = onnx_pool(kind, kernel, strides, (1, 1, 1), padding, False, False)

    def fn(xs):
        y = pool(xs)
        if xs[0].dtype == tf.float32:
            f = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
            want = tf.transpose(f(tf.transpose(xs[0], [0, 2, 3, 4, 1]), kernel, strides, padding), [0, 4, 1, 2, 3])
            np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
        return y

    return fn


ONNX_POOL = {
    # name: x shape, kernel, strides, dilations, pads ((begin, end) per axis), ceil_mode, count_include_pad (avg)
    "dilated": ((2, 3, 7, 6), (3, 2), (1, 2), (2, 3), ((0, 0), (0, 0)), False, False),
    "dilated_padded": ((1, 2, 5, 7), (2, 3), (2, 1), (2, 2), ((1, 0), (2, 1)), False, False),
    "dilated_same": ((1, 2, 6, 5), (3, 2), (2, 1), (2, 1), "SAME", False, False),
    "ceil": ((2, 2, 5, 7), (2, 3), (2, 2), (1, 1), ((0, 0), (1, 0)), True, False),
    "ceil_dropped_window": ((1, 2, 4, 4), (2, 2), (3, 3), (1, 1), ((1, 1), (1, 1)), True, False),
    "ceil_dilated": ((1, 3, 9, 8), (3, 3), (2, 3), (2, 1), ((1, 2), (0, 1)), True, False),
    "include_pad": ((2, 1, 5, 6), (3, 3), (2, 2), (1, 1), ((1, 1), (0, 2)), False, True),
    "include_pad_ceil": ((1, 2, 6, 5), (3, 2), (2, 2), (1, 1), ((1, 0), (1, 0)), True, True),
}
POOL3D = {
    # name: x shape, kernel, strides, dilations, pads or TF padding, ceil_mode, count_include_pad (avg)
    "k2_s2_valid": ((2, 3, 4, 4, 6), (2, 2, 2), (2, 2, 2), (1, 1, 1), "VALID", False, False),
    "k3_s2_same": ((1, 2, 5, 6, 5), (3, 3, 3), (2, 2, 2), (1, 1, 1), "SAME", False, False),
    "rect_s1_same": ((2, 2, 3, 5, 4), (2, 3, 1), (1, 1, 1), (1, 1, 1), "SAME", False, False),
    "overlap_valid": ((1, 2, 7, 5, 6), (3, 2, 3), (2, 1, 2), (1, 1, 1), "VALID", False, False),
    "explicit": ((1, 2, 5, 4, 6), (3, 2, 3), (2, 1, 2), (1, 1, 1), ((1, 1), (0, 1), (1, 0)), False, False),
    "dilated_ceil": ((1, 2, 7, 5, 6), (2, 3, 2), (2, 2, 3), (2, 1, 2), ((1, 0), (1, 1), (0, 1)), True, False),
    "include_pad_ceil": ((2, 1, 5, 4, 5), (2, 2, 3), (2, 2, 2), (1, 1, 1), ((1, 0), (0, 1), (1, 1)), True, True),
}
for kind in ("max", "avg"):
    for op, table in ((f"{kind}_pool2d", ONNX_POOL), (f"{kind}_pool3d", POOL3D)):
        for name, (sx, k, st, dil, pads, ceil, incl) in table.items():
            if incl and kind == "max":
                continue
            fn = (tf_pool3d_check(kind, k, st, pads) if isinstance(pads, str) and len(k) == 3
                  else onnx_pool(kind, k, st, dil, pads, ceil, incl))
            add(op, name, lambda rng, sx=sx: [distinct(rng, sx)], fn, attrs=onnx_pool_attrs(k, st, dil, pads, ceil, incl))


# ---- 3-D convolution ---------------------------------------------------------
# NCDHW with OIDHW weights; TF's CPU kernels want NDHWC with DHWIO filters.
# Groups run group by group and concatenate, as for conv2d. Explicit padding
# is tf.pad with zeros (tf.nn.conv3d takes SAME or VALID only); dilated cases
# go through tf.nn.convolution (TF's CPU Conv3D has no dilation).


def conv3d(strides, padding, dilations, groups):
    def one(x, w):
        w = tf.transpose(w, [2, 3, 4, 1, 0])  # OIDHW -> DHWIO
        pad = padding
        if not isinstance(padding, str):
            x = tf.pad(x, [[0, 0]] + [list(p) for p in padding] + [[0, 0]])
            pad = "VALID"
        if dilations != (1, 1, 1):
            return tf.nn.convolution(x, w, strides, pad, dilations=list(dilations))
        return tf.nn.conv3d(x, w, [1] + list(strides) + [1], pad)

    def fn(xs):
        x = tf.transpose(xs[0], [0, 2, 3, 4, 1])
        ys = [one(xg, wg) for xg, wg in zip(tf.split(x, groups, axis=4), tf.split(xs[1], groups, axis=0))]
        y = tf.transpose(tf.concat(ys, axis=4), [0, 4, 1, 2, 3])
        return y + tf.reshape(xs[2], [1, -1, 1, 1, 1]) if len(xs) == 3 else y

    return fn


CONV3D = {
    # name: x shape, w shape (OIDHW), strides, padding (TF's or (begin, end) per axis), dilations, groups, bias
    "k3_valid": ((2, 3, 4, 5, 4), (4, 3, 3, 3, 3), (1, 1, 1), "VALID", (1, 1, 1), 1, True),
    "s2_same": ((1, 2, 5, 6, 5), (3, 2, 3, 3, 3), (2, 2, 2), "SAME", (1, 1, 1), 1, True),
    "explicit_asym": ((1, 2, 5, 7, 6), (3, 2, 2, 3, 2), (2, 1, 3), ((1, 0), (2, 1), (0, 1)), (1, 1, 1), 1, True),
    "dilated": ((1, 2, 7, 6, 5), (2, 2, 2, 3, 2), (1, 1, 1), "VALID", (2, 1, 2), 1, False),
    "groups2": ((2, 4, 3, 5, 5), (6, 2, 1, 3, 3), (1, 2, 2), "SAME", (1, 1, 1), 2, True),
    "pointwise": ((1, 5, 2, 3, 3), (3, 5, 1, 1, 1), (1, 1, 1), "VALID", (1, 1, 1), 1, True),
}
for name, (sx, sw, st, padding, dil, groups, bias) in CONV3D.items():
    shapes = [sx, sw] + ([(sw[0],)] if bias else [])
    attrs = {"strides_dhw": list(st), "dilations_dhw": list(dil), "groups": groups,
             "padding": padding if isinstance(padding, str) else "EXPLICIT"}
    if not isinstance(padding, str):
        attrs["pads_dhw"] = [p for pr in padding for p in pr]
    add("conv3d", name, inputs(*[normal(*s) for s in shapes]), conv3d(st, padding, dil, groups), attrs=attrs,
        grads=range(len(shapes)))


# ---- ragged sequence ops -----------------------------------------------------
# Plumb's ragged batch is values [total, D...] plus offsets [B+1] (Paddle's
# LoD); TF's reference is segment ops and per-sequence slices of the same
# values, with the offsets as an attribute. Empty sequences are included.


def seq_bounds(offsets):
    return list(zip(offsets[:-1], offsets[1:]))


def sequence_pool(kind, pad, offsets):
    lengths = np.diff(offsets)
    seg = np.repeat(np.arange(len(lengths)), lengths).astype(np.int32)

    def fn(xs):
        x, b = xs[0], len(lengths)
        n = tf.constant(np.maximum(lengths, 1).reshape([-1] + [1] * (len(x.shape) - 1)), x.dtype)
        if kind in ("sum", "average", "sqrt"):
            y = tf.math.unsorted_segment_sum(x, seg, b)
            y = {"sum": y, "average": y / n, "sqrt": y / tf.sqrt(n)}[kind]
        elif kind == "max":
            y = tf.math.unsorted_segment_max(x, seg, b)
        else:
            rows = [lo if kind == "first" else hi - 1 for lo, hi in seq_bounds(offsets)]
            y = tf.gather(x, np.clip(rows, 0, None).astype(np.int32))
        empty = tf.constant((lengths == 0).reshape([-1] + [1] * (len(x.shape) - 1)))
        return tf.where(empty, tf.cast(pad, x.dtype), y)  # an empty sequence yields pad

    return fn


SEQ_OFFSETS = [0, 3, 3, 4, 8]  # lengths 3, 0, 1, 4
for kind in ("sum", "average", "sqrt", "max", "first", "last"):
    add("sequence_pool", kind, lambda rng: [distinct(rng, (8, 3))], sequence_pool(kind, 0.0, SEQ_OFFSETS),
        attrs={"offsets": SEQ_OFFSETS, "pool": kind, "pad": 0.0})
add("sequence_pool", "max_pad_rank3", lambda rng: [distinct(rng, (5, 2, 2))], sequence_pool("max", -1.5, [0, 0, 2, 5]),
    attrs={"offsets": [0, 0, 2, 5], "pool": "max", "pad": -1.5})


def sequence_reverse(offsets):
    lengths = np.diff(offsets)

    def fn(xs):
        padded = tf.RaggedTensor.from_row_splits(xs[0], offsets).to_tensor()
        rev = tf.reverse_sequence(padded, lengths, seq_axis=1, batch_axis=0)
        return tf.RaggedTensor.from_tensor(rev, lengths=lengths).flat_values

    return fn


add("sequence_reverse", "mixed", inputs(normal(8, 3)), sequence_reverse(SEQ_OFFSETS), attrs={"offsets": SEQ_OFFSETS})
add("sequence_reverse", "rank1", inputs(normal(5)), sequence_reverse([0, 2, 5]), attrs={"offsets": [0, 2, 5]})


def sequence_slice(offsets, starts, lengths):
    def fn(xs):
        return tf.concat([xs[0][lo + s:lo + s + n] for (lo, _), s, n in zip(seq_bounds(offsets), starts, lengths)], 0)

    return fn


add("sequence_slice", "mixed", inputs(normal(8, 3)), sequence_slice(SEQ_OFFSETS, [1, 0, 0, 1], [2, 0, 1, 3]),
    attrs={"offsets": SEQ_OFFSETS, "starts": [1, 0, 0, 1], "lengths": [2, 0, 1, 3]})


def sequence_expand(offsets):
    return lambda xs: tf.repeat(xs[0], np.diff(offsets), axis=0)


add("sequence_expand", "mixed", inputs(normal(4, 3)), sequence_expand(SEQ_OFFSETS), attrs={"offsets": SEQ_OFFSETS})
add("sequence_expand", "rank3", inputs(normal(2, 2, 2)), sequence_expand([0, 3, 4]), attrs={"offsets": [0, 3, 4]})


def sequence_concat(off_a, off_b):
    def fn(xs):
        parts = []
        for (a0, a1), (b0, b1) in zip(seq_bounds(off_a), seq_bounds(off_b)):
            parts += [xs[0][a0:a1], xs[1][b0:b1]]
        return tf.concat(parts, 0)

    return fn


add("sequence_concat", "mixed", inputs(normal(8, 3), normal(4, 3)), sequence_concat(SEQ_OFFSETS, [0, 1, 3, 3, 4]),
    attrs={"offsets": SEQ_OFFSETS, "offsets_b": [0, 1, 3, 3, 4]}, grads=(0, 1))


def sequence_softmax(offsets):
    return lambda xs: tf.concat([tf.nn.softmax(xs[0][lo:hi], axis=0) for lo, hi in seq_bounds(offsets)], 0)


add("sequence_softmax", "vector", inputs(normal(8)), sequence_softmax(SEQ_OFFSETS), attrs={"offsets": SEQ_OFFSETS})
add("sequence_softmax", "column", lambda rng: [rng.standard_normal((6, 1)) * 5], sequence_softmax([0, 4, 6]),
    attrs={"offsets": [0, 4, 6]})


# ---- attention -----------------------------------------------------------------
# The formulas of tf.keras.layers.Attention (with a scale) and
# AdditiveAttention (use_scale=True) in TF ops; masked keys get Keras'
# -1e9 before the softmax.


def attn_allowed(b, tq, tk, key_lengths, causal, mask):
    ok = np.ones((b, 1, tq, tk), dtype=bool)
    if key_lengths is not None:
        ok &= (np.arange(tk)[None, :] < np.array(key_lengths)[:, None])[:, None, None, :]
    if causal:
        ok &= np.tril(np.ones((tq, tk), dtype=bool))[None, None]
    if mask is not None:
        ok &= (mask != 0)[:, None, None, :]
    return ok


def masked_softmax(scores, ok):
    return tf.nn.softmax(tf.where(ok, scores, tf.cast(-1e9, scores.dtype)), axis=-1)


def attention(scale, key_lengths=None, causal=False):
    def fn(xs):
        q, k, v = xs[:3]
        rank3 = len(q.shape) == 3
        if rank3:
            q, k, v = q[:, None], k[:, None], v[:, None]
        mask = xs[3].numpy() if len(xs) == 4 else None
        ok = attn_allowed(q.shape[0], q.shape[2], k.shape[2], key_lengths, causal, mask)
        s = tf.linalg.matmul(q, k, transpose_b=True) * (scale or 1 / np.sqrt(q.shape[-1]))
        y = tf.linalg.matmul(masked_softmax(s, ok), v)
        return y[:, 0] if rank3 else y

    return fn


def attn_attrs(scale, key_lengths=None, causal=False):
    a = {"scale": scale, "causal": causal}
    if key_lengths is not None:
        a["key_lengths"] = key_lengths
    return a


add("attention", "rank3", inputs(normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 3)), attention(0.0),
    attrs=attn_attrs(0.0), grads=(0, 1, 2))
add("attention", "heads_scale", inputs(normal(2, 2, 3, 4), normal(2, 2, 4, 4), normal(2, 2, 4, 2)), attention(0.25),
    attrs=attn_attrs(0.25), grads=(0, 1, 2))
add("attention", "causal", inputs(normal(1, 2, 4, 3), normal(1, 2, 4, 3), normal(1, 2, 4, 3)),
    attention(0.0, causal=True), attrs=attn_attrs(0.0, causal=True), grads=(0, 1, 2))
add("attention", "key_lengths_mask",
    lambda rng: [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 2)),
                 np.array([[1, 0, 1, 1, 1], [1, 1, 1, 0, 1]], np.float64)],
    attention(0.0, key_lengths=[4, 5]), attrs=attn_attrs(0.0, key_lengths=[4, 5]), grads=(0, 1, 2))


def additive_attention(key_lengths=None, causal=False):
    def fn(xs):
        q, k, v, values = xs[:4]
        mask = xs[4].numpy() if len(xs) == 5 else None
        ok = attn_allowed(q.shape[0], q.shape[1], k.shape[1], key_lengths, causal, mask)[:, 0]
        s = tf.reduce_sum(v * tf.tanh(q[:, :, None, :] + k[:, None, :, :]), axis=-1)
        return tf.linalg.matmul(masked_softmax(s, ok), values)

    return fn


add("additive_attention", "plain", inputs(normal(2, 3, 4), normal(2, 5, 4), normal(4), normal(2, 5, 3)),
    additive_attention(), attrs=attn_attrs(0.0), grads=(0, 1, 2, 3))
add("additive_attention", "key_lengths_mask",
    lambda rng: [rng.standard_normal((2, 2, 3)), rng.standard_normal((2, 4, 3)), rng.standard_normal(3),
                 rng.standard_normal((2, 4, 2)), np.array([[1, 1, 0, 1], [0, 1, 1, 1]], np.float64)],
    additive_attention(key_lengths=[3, 4]), attrs=attn_attrs(0.0, key_lengths=[3, 4]), grads=(0, 1, 2, 3))


# ---- recurrent ops ---------------------------------------------------------
# Plumb's LSTM and GRU use Keras' weight layouts and gate orders (LSTM: W
# [In, 4H], U [H, 4H], b [4H] in blocks i, f, c, o; GRU: blocks z, r, h,
# with b [2, 3H] (input row, recurrent row) when reset_after), so Keras'
# LSTMCell and GRUCell take Plumb's weights as they are. The fused ops run
# over a ragged batch; the recorder steps the Keras cell over each sequence
# on its own (backwards for reverse), which is what a masked Keras RNN
# computes, and checks that against keras.layers.LSTM / GRU with a mask on
# the padded batch (final states). The fused ops' output rows are each
# step's state: concat(h, c) for the LSTM, h for the GRU. Keras has no
# peephole LSTM, so peephole cases step TF1's LSTMCell(use_peepholes=True)
# written in TF ops (checked against Keras' cell with zero peepholes).

RNN_OFFSETS = [0, 3, 3, 4, 8]  # lengths 3, 0, 1, 4
RNN_IN, RNN_H = 3, 2


def keras_cell(kind, h, dtype, weights, reset_after=True):
    """A built Keras LSTMCell or GRUCell holding weights (kernel, recurrent, bias)."""
    if kind == "lstm":
        cell = keras.layers.LSTMCell(h, dtype=dtype)
    else:
        cell = keras.layers.GRUCell(h, reset_after=reset_after, dtype=dtype)
    cell.build((None, weights[0].shape[0]))
    cell.set_weights([np.asarray(w) for w in weights])
    return cell


def peephole_lstm_step(x, h, c, w, u, b, p):
    """One step of TF1's LSTMCell(use_peepholes=True, forget_bias=0) in Plumb's gate order."""
    zi, zf, zg, zo = tf.split(tf.linalg.matmul(x, w) + tf.linalg.matmul(h, u) + b, 4, axis=-1)
    pi, pf, po = tf.split(p, 3)
    i, f = tf.sigmoid(zi + pi * c), tf.sigmoid(zf + pf * c)
    c = f * c + i * tf.tanh(zg)
    return tf.sigmoid(zo + po * c) * tf.tanh(c), c


def lstm_stepper(xs, w, u, b, p):
    """The step function and its gradient substitutes for weights at inputs w, u, b (and p)."""
    if p is None:
        cell = keras_cell("lstm", xs[u].shape[0], xs[0].dtype.name, [xs[w], xs[u], xs[b]])

        def step(x, h, c):
            _, (h, c) = cell(x, [h, c])
            return h, c

        return step, {w: cell.kernel, u: cell.recurrent_kernel, b: cell.bias}
    check_peephole_reference()
    return lambda x, h, c: peephole_lstm_step(x, h, c, xs[w], xs[u], xs[b], xs[p]), {}


def run_rnn(offsets, reverse, h0, step):
    """Steps each sequence of a ragged batch from its initial state (a list of
    [B, H] tensors), step(row, *state) -> state, and returns every row's
    state, concatenated along features, in the rows' order."""
    rows = [None] * offsets[-1]
    for q, (lo, hi) in enumerate(seq_bounds(offsets)):
        s = [t[q:q + 1] for t in h0]
        for r in (range(hi - 1, lo - 1, -1) if reverse else range(lo, hi)):
            s = step(r, *s)
            rows[r] = tf.concat(s, 1)
    return tf.concat(rows, 0)


def check_keras_rnn(kind, xs, offsets, reverse, h0, rows, reset_after=True):
    """Asserts that keras.layers.LSTM / GRU with a mask on the padded batch
    ends in the final states of the recorded rows (the initial state for
    an empty sequence)."""
    x, w, u, b = (np.asarray(v) for v in xs[:4])
    h = u.shape[0]
    lengths = np.diff(offsets)
    t = max(lengths.max(), 1)
    padded = np.zeros((len(lengths), t, x.shape[1]), x.dtype)
    for q, (lo, hi) in enumerate(seq_bounds(offsets)):
        padded[q, :hi - lo] = x[lo:hi]
    mask = np.arange(t)[None, :] < lengths[:, None]
    if kind == "lstm":
        layer = keras.layers.LSTM(h, return_state=True, go_backwards=reverse, dtype=x.dtype.name)
    else:
        layer = keras.layers.GRU(h, return_state=True, go_backwards=reverse, reset_after=reset_after,
                                 dtype=x.dtype.name)
    layer.build(padded.shape)
    layer.set_weights([w, u, b])
    res = layer(padded, mask=mask, initial_state=[tf.constant(np.asarray(s)) for s in h0])
    final = np.concatenate([np.asarray(s) for s in res[1:]], 1)
    rows = np.asarray(rows)
    for q, (lo, hi) in enumerate(seq_bounds(offsets)):
        want = np.concatenate([np.asarray(s)[q] for s in h0]) if lo == hi else rows[lo if reverse else hi - 1]
        np.testing.assert_allclose(final[q], want, rtol=1e-5 if x.dtype == np.float32 else 1e-12, atol=1e-6)


def lstm(offsets, reverse, peephole, init):
    def fn(xs):
        h = xs[2].shape[0]
        b = len(offsets) - 1
        p = 4 if peephole else None
        step, subs = lstm_stepper(xs, 1, 2, 3, p)
        h0 = list(xs[-2:]) if init else [tf.zeros([b, h], xs[0].dtype)] * 2
        y = run_rnn(offsets, reverse, h0, lambda r, hh, cc: step(xs[0][r:r + 1], hh, cc))
        if not peephole:
            check_keras_rnn("lstm", xs, offsets, reverse, h0, y)
        return y, subs, {}

    return fn


def lstm_make(offsets, peephole, init):
    b = len(offsets) - 1

    def make(rng):
        a = [rng.standard_normal((offsets[-1], RNN_IN)), rng.standard_normal((RNN_IN, 4 * RNN_H)) * 0.7,
             rng.standard_normal((RNN_H, 4 * RNN_H)) * 0.7, rng.standard_normal(4 * RNN_H) * 0.5]
        if peephole:
            a.append(rng.standard_normal(3 * RNN_H) * 0.5)
        if init:
            a += [rng.standard_normal((b, RNN_H)), rng.standard_normal((b, RNN_H))]
        return a

    return make


for name, offsets, reverse, peephole, init in (
        ("ragged", RNN_OFFSETS, False, False, False),
        ("ragged_reverse", RNN_OFFSETS, True, False, False),
        ("init_state", RNN_OFFSETS, False, False, True),
        ("init_state_reverse", [0, 2, 7], True, False, True),
        ("peephole", RNN_OFFSETS, False, True, False),
        ("peephole_init_reverse", RNN_OFFSETS, True, True, True)):
    n = 4 + peephole + 2 * init
    add("lstm", name, lstm_make(offsets, peephole, init), lstm(offsets, reverse, peephole, init),
        attrs={"offsets": offsets, "reverse": reverse}, grads=range(n))


def lstm_cell(peephole):
    def fn(xs):
        step, subs = lstm_stepper(xs, 3, 4, 5, 6 if peephole else None)
        return tf.concat(step(xs[0], xs[1], xs[2]), 1), subs, {}

    return fn


def lstm_cell_make(peephole):
    def make(rng):
        a = [rng.standard_normal((3, RNN_IN)), rng.standard_normal((3, RNN_H)), rng.standard_normal((3, RNN_H)),
             rng.standard_normal((RNN_IN, 4 * RNN_H)) * 0.7, rng.standard_normal((RNN_H, 4 * RNN_H)) * 0.7,
             rng.standard_normal(4 * RNN_H) * 0.5]
        return a + [rng.standard_normal(3 * RNN_H) * 0.5] if peephole else a

    return make


add("lstm_cell", "keras", lstm_cell_make(False), lstm_cell(False), grads=range(6))
add("lstm_cell", "peephole", lstm_cell_make(True), lstm_cell(True), grads=range(7))


def check_peephole_reference():
    """TF1's peephole cell with zero peepholes is Keras' LSTMCell."""
    rng = np.random.default_rng(0)
    x, h, c = rng.standard_normal((2, RNN_IN)), rng.standard_normal((2, RNN_H)), rng.standard_normal((2, RNN_H))
    w, u, b = rng.standard_normal((RNN_IN, 4 * RNN_H)), rng.standard_normal((RNN_H, 4 * RNN_H)), rng.standard_normal(4 * RNN_H)
    _, (hk, ck) = keras_cell("lstm", RNN_H, "float64", [w, u, b])(x, [h, c])
    hp, cp = peephole_lstm_step(x, h, c, w, u, b, np.zeros(3 * RNN_H))
    np.testing.assert_allclose(np.asarray(hp), np.asarray(hk), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(cp), np.asarray(ck), rtol=1e-13)


def gru(offsets, reverse, reset_after, init):
    def fn(xs):
        h = xs[2].shape[0]
        cell = keras_cell("gru", h, xs[0].dtype.name, xs[1:4], reset_after)
        h0 = [xs[4]] if init else [tf.zeros([len(offsets) - 1, h], xs[0].dtype)]
        y = run_rnn(offsets, reverse, h0, lambda r, hh: (cell(xs[0][r:r + 1], [hh])[0],))
        check_keras_rnn("gru", xs, offsets, reverse, h0, y, reset_after)
        return y, {1: cell.kernel, 2: cell.recurrent_kernel, 3: cell.bias}, {}

    return fn


def gru_make(offsets, reset_after, init, cell=False):
    b = len(offsets) - 1

    def make(rng):
        x = rng.standard_normal((offsets[-1], RNN_IN))
        h = [rng.standard_normal((b, RNN_H))] if init else []
        w = [rng.standard_normal((RNN_IN, 3 * RNN_H)) * 0.7, rng.standard_normal((RNN_H, 3 * RNN_H)) * 0.7,
             rng.standard_normal((2, 3 * RNN_H) if reset_after else 3 * RNN_H) * 0.5]
        return [x] + h + w if cell else [x] + w + h

    return make


for reset_after in (True, False):
    ra = "reset_after" if reset_after else "reset_before"
    for name, offsets, reverse, init in ((ra, RNN_OFFSETS, False, False),
                                         (ra + "_reverse_init", RNN_OFFSETS, True, True),
                                         (ra + "_init", [0, 1, 6], False, True)):
        add("gru", name, gru_make(offsets, reset_after, init), gru(offsets, reverse, reset_after, init),
            attrs={"offsets": offsets, "reverse": reverse, "reset_after": reset_after}, grads=range(4 + init))


def gru_cell(reset_after):
    def fn(xs):
        cell = keras_cell("gru", xs[1].shape[1], xs[0].dtype.name, xs[2:5], reset_after)
        return cell(xs[0], [xs[1]])[0], {2: cell.kernel, 3: cell.recurrent_kernel, 4: cell.bias}, {}

    return fn


for reset_after in (True, False):
    add("gru_cell", "reset_after" if reset_after else "reset_before", gru_make(list(range(4)), reset_after, True, True),
        gru_cell(reset_after), attrs={"reset_after": reset_after}, grads=range(5))


def rnn_final_state(offsets, reverse, init):
    def fn(xs):
        rows = []
        for q, (lo, hi) in enumerate(seq_bounds(offsets)):
            if lo == hi:
                rows.append(xs[1][q] if init else tf.zeros(xs[0].shape[1:], xs[0].dtype))
            else:
                rows.append(xs[0][lo if reverse else hi - 1])
        return tf.stack(rows)

    return fn


for name, reverse, init in (("last", False, False), ("first_reverse", True, False), ("init", False, True),
                            ("init_reverse", True, True)):
    add("rnn_final_state", name,
        lambda rng, init=init: [rng.standard_normal((RNN_OFFSETS[-1], 4))] +
        ([rng.standard_normal((len(RNN_OFFSETS) - 1, 4))] if init else []),
        rnn_final_state(RNN_OFFSETS, reverse, init), attrs={"offsets": RNN_OFFSETS, "reverse": reverse},
        grads=range(1 + init))


# ---- linear-chain CRF --------------------------------------------------------
# TF core has no CRF, so the reference is the forward algorithm in TF ops,
# in the case dtype: with transitions[i, j] scoring tag i -> tag j and
# separate start and stop vectors (ops/crf.go), per sequence
#   alpha_0 = start + e_0,  alpha_t[j] = logsumexp_i(alpha_{t-1}[i] + T[i, j]) + e_t[j],
#   nll = logsumexp(alpha_last + stop) - score(tags),
# an empty sequence's nll is 0. GradientTape gives the gradients. Viterbi
# decoding is checked against a brute force over all K^T paths.

CRF_OFFSETS = [0, 3, 3, 4, 8]  # lengths 3, 0, 1, 4
CRF_K = 3


def crf_score(e, tr, st, sp, tags, lo, hi):
    y = tags[lo:hi]
    s = st[y[0]] + sp[y[-1]] + tf.reduce_sum(tf.gather_nd(e, np.stack([np.arange(lo, hi), y], 1)))
    if hi - lo > 1:
        s += tf.reduce_sum(tf.gather_nd(tr, np.stack([y[:-1], y[1:]], 1)))
    return s


def crf_nll(offsets):
    def fn(xs):
        e, tr, st, sp = xs[:4]
        tags = xs[4].numpy()
        nll = []
        for lo, hi in seq_bounds(offsets):
            if lo == hi:
                nll.append(tf.zeros([], e.dtype))
                continue
            alpha = st + e[lo]
            for r in range(lo + 1, hi):
                alpha = tf.reduce_logsumexp(alpha[:, None] + tr, axis=0) + e[r]
            nll.append(tf.reduce_logsumexp(alpha + sp) - crf_score(e, tr, st, sp, tags, lo, hi))
        return tf.stack(nll)

    return fn


def crf_make(offsets, k, scale):
    return lambda rng: [rng.standard_normal((offsets[-1], k)) * scale, rng.standard_normal((k, k)),
                        rng.standard_normal(k), rng.standard_normal(k),
                        rng.integers(0, k, offsets[-1]).astype(np.int64)]


add("crf", "ragged", crf_make(CRF_OFFSETS, CRF_K, 1.0), crf_nll(CRF_OFFSETS), attrs={"offsets": CRF_OFFSETS},
    grads=(0, 1, 2, 3))
add("crf", "long_k5", crf_make([0, 7, 9], 5, 3.0), crf_nll([0, 7, 9]), attrs={"offsets": [0, 7, 9]},
    grads=(0, 1, 2, 3))


def viterbi(offsets):
    """Brute-force decoding: the highest-scoring of all K^T paths per sequence
    (scores in float64 of the case's values, as Plumb scores them)."""

    def fn(xs):
        e, tr, st, sp = (np.asarray(a, np.float64) for a in xs[:4])
        paths, scores = [], []
        for lo, hi in seq_bounds(offsets):
            if lo == hi:
                scores.append(0.0)
                continue
            best = max(itertools.product(range(e.shape[1]), repeat=hi - lo),
                       key=lambda y: st[y[0]] + sp[y[-1]] + sum(e[lo + t, v] for t, v in enumerate(y)) +
                       sum(tr[a, b] for a, b in zip(y, y[1:])))
            y = np.array(best)
            scores.append(st[y[0]] + sp[y[-1]] + e[np.arange(lo, hi), y].sum() + tr[y[:-1], y[1:]].sum())
            paths += list(best)
        return paths, scores

    return fn


add("viterbi_decode", "ragged", lambda rng: crf_make(CRF_OFFSETS, CRF_K, 1.0)(rng)[:4], viterbi(CRF_OFFSETS),
    attrs={"offsets": CRF_OFFSETS}, grads=(), kind="decode")
add("viterbi_decode", "long_k4", lambda rng: crf_make([0, 6, 7], 4, 2.0)(rng)[:4], viterbi([0, 6, 7]),
    attrs={"offsets": [0, 6, 7]}, grads=(), kind="decode")

# ---- sequence_conv -------------------------------------------------------------
# Paddle's context projection (ops/sequence_conv.go) composed in TF ops: each
# row's window of context_length steps from context_start on, inside its own
# sequence, gathered side by side from a table of x's rows, the trainable
# padding rows and a zero row, then one matmul with the filter. A window step
# k before its sequence's start reads padding row upPad-k, the k-th step
# past its end (k = 0, 1, ...) row upPad+k; without padding both read zero.


def sequence_conv(offsets, start, length, trainable):
    up = max(0, -start)

    def fn(xs):
        x, f = xs[0], xs[1]
        total, d = x.shape
        pad = xs[2] if trainable else tf.zeros([0, d], x.dtype)
        table = tf.concat([x, pad, tf.zeros([1, d], x.dtype)], 0)
        zero = total + pad.shape[0]
        idx = np.full((total, length), zero, np.int32)
        for lo, hi in seq_bounds(offsets):
            n = hi - lo
            for t in range(n):
                for w in range(length):
                    p = t + start + w
                    if 0 <= p < n:
                        idx[lo + t, w] = lo + p
                    elif trainable:
                        idx[lo + t, w] = total + up + (p if p < 0 else p - n)
        return tf.linalg.matmul(tf.reshape(tf.gather(table, idx), [total, length * d]), f)

    return fn


def seq_conv_make(offsets, d, start, length, out, trainable):
    pad_rows = max(0, -start) + max(0, start + length - 1)
    return lambda rng: ([rng.standard_normal((offsets[-1], d)), rng.standard_normal((length * d, out))] +
                        ([rng.standard_normal((pad_rows, d))] if trainable else []))


for name, start, length, trainable in (("centered_zero_pad", -1, 3, False), ("centered_trainable", -1, 3, True),
                                       ("ahead_trainable", 0, 3, True), ("behind_trainable", -2, 2, True),
                                       ("wide_trainable", -2, 5, True)):
    add("sequence_conv", name, seq_conv_make(SEQ_OFFSETS, 2, start, length, 3, trainable),
        sequence_conv(SEQ_OFFSETS, start, length, trainable),
        attrs={"offsets": SEQ_OFFSETS, "context_start": start, "context_length": length},
        grads=range(2 + trainable))

# sequence_conv_pool_max: the context projection above, then each sequence's
# column maxima (unsorted_segment_max; 0 for an empty sequence). Normal draws
# leave no tied maxima, where TF would split the gradient.


def sequence_conv_pool_max(offsets, start, length, trainable):
    conv, pool = sequence_conv(offsets, start, length, trainable), sequence_pool("max", 0.0, offsets)
    return lambda xs: pool([conv(xs)])


for name, start, length, trainable in (("centered_zero_pad", -1, 3, False), ("centered_trainable", -1, 3, True),
                                       ("behind_trainable", -2, 4, True), ("wide_zero_pad", -3, 7, False)):
    add("sequence_conv_pool_max", name, seq_conv_make(SEQ_OFFSETS, 2, start, length, 3, trainable),
        sequence_conv_pool_max(SEQ_OFFSETS, start, length, trainable),
        attrs={"offsets": SEQ_OFFSETS, "context_start": start, "context_length": length},
        grads=range(2 + trainable))

# ---- whole layers and models ---------------------------------------------------
# Model cases run a Plumb layer or model on weights loaded by parameter name;
# the Keras equivalent gets the same weights, mapped to its layouts, and the
# gradients of Keras' own variables are mapped back into Plumb's layouts.
# Some of their gradients are zero in exact arithmetic (see the
# "cancellation" tolerance class).

MHA_PARAMS = ["query/kernel", "query/bias", "key/kernel", "key/bias", "value/kernel", "value/bias",
              "attention_output/kernel", "attention_output/bias"]


def multi_head_attention(heads, key_dim, out_dim, key_lengths, causal, n_data):
    """keras.layers.MultiHeadAttention: its kernels [D, heads, key_dim] and
    [heads, key_dim, out] and biases are Plumb's layouts, so no mapping; the
    key lengths become a [B, Tq, Tk] attention mask. Keras casts its scale
    1/sqrt(key_dim), a Python float, through float32 even in float64 (as it
    does the optimizers' hyperparameters), so the cases use key_dim 4 and 16,
    whose scales float32 holds exactly."""

    def fn(xs):
        q, v = xs[0], xs[1]
        k = xs[2] if n_data == 3 else None
        layer = keras.layers.MultiHeadAttention(heads, key_dim, output_shape=out_dim, dtype=q.dtype.name)
        layer.build(q.shape, v.shape, None if k is None else k.shape)
        dense = [layer._query_dense, layer._key_dense, layer._value_dense, layer._output_dense]
        variables = [w for dl in dense for w in (dl.kernel, dl.bias)]
        for var, x in zip(variables, xs[n_data:]):
            var.assign(x)
        mask = None
        if key_lengths is not None:
            m = np.arange(v.shape[1])[None, :] < np.array(key_lengths)[:, None]
            mask = np.broadcast_to(m[:, None, :], (q.shape[0], q.shape[1], v.shape[1]))
        y = layer(q, v, key=k, attention_mask=mask, use_causal_mask=causal)
        return y, {n_data + i: var for i, var in enumerate(variables)}, {}

    return fn


def mha_make(b, tq, tk, dq, dv, heads, key_dim, out_dim, separate_key):
    def make(rng):
        data = [rng.standard_normal((b, tq, dq)), rng.standard_normal((b, tk, dv))]
        if separate_key:
            data.append(rng.standard_normal((b, tk, dv)))
        w = []
        for d_in in (dq, dv, dv):
            w += [rng.standard_normal((d_in, heads, key_dim)) / np.sqrt(d_in), rng.standard_normal((heads, key_dim)) * 0.3]
        w += [rng.standard_normal((heads, key_dim, out_dim)) / np.sqrt(heads * key_dim), rng.standard_normal(out_dim) * 0.3]
        return data + w

    return make


for name, (b, tq, tk, dq, dv, heads, key_dim, out_dim, sep, key_lengths, causal) in {
        "key_padding": (2, 3, 5, 4, 6, 2, 4, 5, False, [3, 5], False),
        "separate_key_padding": (2, 4, 3, 5, 4, 3, 4, 4, True, [2, 3], False),
        "causal_self": (2, 4, 4, 4, 4, 1, 16, 4, False, None, True)}.items():
    n_data = 3 if sep else 2
    attrs = {"heads": heads, "key_dim": key_dim, "out_dim": out_dim, "causal": causal}
    if key_lengths is not None:
        attrs["key_lengths"] = key_lengths
    add("multi_head_attention", name, mha_make(b, tq, tk, dq, dv, heads, key_dim, out_dim, sep),
        multi_head_attention(heads, key_dim, out_dim, key_lengths, causal, n_data), attrs=attrs,
        grads=range(n_data + len(MHA_PARAMS)), kind="model", tol="cancellation",
        params={"mha/" + p: n_data + i for i, p in enumerate(MHA_PARAMS)})

# The book's MNIST CNN (models/mnist.NewCNN) on the first 8 training digits
# of the repository's MNIST: the mean softmax cross-entropy of its logits in
# training mode (batch norm on batch statistics, moving statistics updated)
# and every parameter's gradient. Keras runs NHWC with HWIO kernels, and its
# Flatten orders the 50x4x4 features H, W, C where Plumb's orders C, H, W,
# so the fc kernel's rows are permuted here.

MNIST_PARAMS = ["conv1/kernel", "conv1/bias", "bn1/gamma", "bn1/beta", "bn1/moving_mean", "bn1/moving_variance",
                "conv2/kernel", "conv2/bias", "fc/kernel", "fc/bias"]
MNIST_BATCH = 8


def mnist_digits(n):
    """The first n training images (scaled to [0, 1], NCHW) and labels."""
    root = os.path.join(REPO, "data", "mnist", "embedded")
    with gzip.open(os.path.join(root, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)[:n * 784].reshape(n, 1, 28, 28) / 255.0
    with gzip.open(os.path.join(root, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:n].astype(np.int64)
    return images, labels


def oihw_to_hwio(w):
    return np.transpose(w, [2, 3, 1, 0])


def hwio_to_oihw(g):
    return np.ascontiguousarray(np.transpose(g, [3, 2, 0, 1]))


def fc_to_keras(w):
    """Plumb's fc kernel rows (C, H, W order) into Keras' (H, W, C)."""
    return w.reshape(50, 4, 4, -1).transpose(1, 2, 0, 3).reshape(800, -1)


def fc_to_plumb(g):
    return np.ascontiguousarray(g.reshape(4, 4, 50, -1).transpose(2, 0, 1, 3).reshape(800, -1))


def mnist_cnn(xs):
    dt = xs[0].dtype.name
    conv1 = keras.layers.Conv2D(20, 5, activation="relu", dtype=dt)
    bn = keras.layers.BatchNormalization(momentum=0.99, epsilon=1e-3, dtype=dt)
    conv2 = keras.layers.Conv2D(50, 5, activation="relu", dtype=dt)
    fc = keras.layers.Dense(10, dtype=dt)
    model = keras.Sequential([keras.Input((28, 28, 1), dtype=dt), conv1, keras.layers.MaxPooling2D(2, dtype=dt), bn,
                              conv2, keras.layers.MaxPooling2D(2, dtype=dt), keras.layers.Flatten(dtype=dt), fc])
    w = [x.numpy() for x in xs[2:]]
    conv1.set_weights([oihw_to_hwio(w[0]), w[1]])
    bn.set_weights(w[2:6])
    conv2.set_weights([oihw_to_hwio(w[6]), w[7]])
    fc.set_weights([fc_to_keras(w[8]), w[9]])
    logits = model(nhwc(xs[0]), training=True)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=xs[1], logits=logits))
    subs = {2: (conv1.kernel, hwio_to_oihw), 3: conv1.bias, 4: bn.gamma, 5: bn.beta,
            8: (conv2.kernel, hwio_to_oihw), 9: conv2.bias, 10: (fc.kernel, fc_to_plumb), 11: fc.bias}
    return loss, subs, {6: bn.moving_mean.numpy(), 7: bn.moving_variance.numpy()}


def mnist_make(rng):
    images, labels = mnist_digits(MNIST_BATCH)
    return [images, labels,
            rng.standard_normal((20, 1, 5, 5)) / 5, rng.standard_normal(20) * 0.1,
            rng.uniform(0.5, 1.5, 20), rng.standard_normal(20) * 0.1,
            rng.standard_normal(20) * 0.1, rng.uniform(0.5, 1.5, 20),
            rng.standard_normal((50, 20, 5, 5)) / np.sqrt(500), rng.standard_normal(50) * 0.1,
            rng.standard_normal((800, 10)) / np.sqrt(800), rng.standard_normal(10) * 0.1]


add("mnist_cnn", "train_batch8", mnist_make, mnist_cnn, grads=(2, 3, 4, 5, 8, 9, 10, 11), kind="model",
    params={p: 2 + i for i, p in enumerate(MNIST_PARAMS)}, tol="cancellation")


# ---- optimizers ------------------------------------------------------------
# Keras casts a Python-float hyperparameter to the variable's dtype through
# a float32 tensor (ops.cast converts it first), and keeps the learning rate
# in a float32 variable; so in float64 Keras runs with float32-rounded
# hyperparameters. The "exact" variants therefore use values float32 holds
# exactly (powers of two and sums of a few), recorded in both dtypes; the
# "keras_defaults" variants use Keras' defaults (but a learning rate of
# 1/16, so the update is visible) and are recorded in float32 only, where
# both sides round the hyperparameters to float32 alike.

OPTIMIZERS = {
    "optim_sgd": {"exact": ("SGD", {"learning_rate": 0.125}),
                  "keras_defaults": ("SGD", {"learning_rate": 0.0625})},
    "optim_momentum": {"exact": ("SGD", {"learning_rate": 0.0625, "momentum": 0.875}),
                       "m0.5": ("SGD", {"learning_rate": 0.25, "momentum": 0.5}),
                       "keras_defaults": ("SGD", {"learning_rate": 0.0625, "momentum": 0.9})},
    "optim_nesterov": {"exact": ("SGD", {"learning_rate": 0.0625, "momentum": 0.875, "nesterov": True}),
                       "keras_defaults": ("SGD", {"learning_rate": 0.0625, "momentum": 0.9, "nesterov": True})},
    "optim_adam": {"exact": ("Adam", {"learning_rate": 0.0625, "beta_1": 0.875, "beta_2": 0.99609375,
                                      "epsilon": 2.0 ** -20}),
                   "large_eps": ("Adam", {"learning_rate": 0.03125, "beta_1": 0.75, "beta_2": 0.9375,
                                          "epsilon": 2.0 ** -10}),
                   "keras_defaults": ("Adam", {"learning_rate": 0.0625, "beta_1": 0.9, "beta_2": 0.999,
                                               "epsilon": 1e-7})},
    "optim_adamw": {"exact": ("AdamW", {"learning_rate": 0.0625, "weight_decay": 2.0 ** -6, "beta_1": 0.875,
                                        "beta_2": 0.99609375, "epsilon": 2.0 ** -20}),
                    "wd0.125": ("AdamW", {"learning_rate": 0.125, "weight_decay": 0.125, "beta_1": 0.875,
                                          "beta_2": 0.99609375, "epsilon": 2.0 ** -20}),
                    "keras_defaults": ("AdamW", {"learning_rate": 0.0625, "weight_decay": 0.004, "beta_1": 0.9,
                                                 "beta_2": 0.999, "epsilon": 1e-7})},
    "optim_rmsprop": {"exact": ("RMSprop", {"learning_rate": 0.0625, "rho": 0.875, "momentum": 0.0,
                                            "epsilon": 2.0 ** -20, "centered": False}),
                      "momentum_centered": ("RMSprop", {"learning_rate": 0.03125, "rho": 0.75, "momentum": 0.5,
                                                        "epsilon": 2.0 ** -20, "centered": True}),
                      "keras_defaults": ("RMSprop", {"learning_rate": 0.0625, "rho": 0.9, "momentum": 0.0,
                                                     "epsilon": 1e-7, "centered": False})},
    "optim_adagrad": {"exact": ("Adagrad", {"learning_rate": 0.125, "initial_accumulator_value": 0.125,
                                            "epsilon": 2.0 ** -20}),
                      "keras_defaults": ("Adagrad", {"learning_rate": 0.0625, "initial_accumulator_value": 0.1,
                                                     "epsilon": 1e-7})},
}
# Keras' float32 Adam computes 1 - beta_2^t in float32; see the
# "keras_adam_f32" tolerance class.
OPT_TOL = {("optim_adam", "keras_defaults"): "keras_adam_f32", ("optim_adamw", "keras_defaults"): "keras_adam_f32"}


def optimizer_fn(cls, kw):
    def fn(var0, grads):
        var = keras.Variable(var0, dtype=var0.dtype.name)
        opt = getattr(keras.optimizers, cls)(**kw)
        out = []
        for g in grads:
            opt.apply_gradients([(tf.constant(g), var)])
            out.append(np.array(var.numpy()))
        return out

    return fn


for op, variants in OPTIMIZERS.items():
    for name, (cls, kw) in variants.items():
        add(op, name, lambda rng: [rng.standard_normal((3, 4)) for _ in range(1 + OPT_STEPS)],
            optimizer_fn(cls, kw), attrs=dict(kw), grads=(), kind="optimizer",
            tol=OPT_TOL.get((op, name), "default"), dtypes=("float32",) if name == "keras_defaults" else DTYPES)


# ---- driver ----------------------------------------------------------------


def cast(a, dtype):
    return a.astype(dtype) if np.issubdtype(a.dtype, np.floating) else a


def as_array(t, dtype):
    """A gradient or output as a numpy array (IndexedSlices densified)."""
    if isinstance(t, tf.IndexedSlices):
        t = tf.convert_to_tensor(t)
    a = np.asarray(t.numpy() if hasattr(t, "numpy") else t)
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    return a


def save(path, a):
    np.save(path, np.asarray(a, order="C"), allow_pickle=False)


def run_op(c, arrays, dtype, rng, gout=None):
    """Runs an op or model case's function on arrays under a GradientTape and
    returns its output, the gradients of c.grads (in Plumb's layouts), the
    inputs it updated and the upstream gradient: gout, or a draw from rng in
    the output's shape when gout is None."""
    xs = [tf.Variable(a, trainable=np.issubdtype(a.dtype, np.floating)) for a in arrays]
    with tf.GradientTape() as tape:
        res = c.fn(xs)
        y, subs, extras = res if isinstance(res, tuple) else (res, {}, {})
    gout = cast(rng.standard_normal(tuple(y.shape)), dtype) if gout is None else gout
    targets = [subs.get(i, xs[i]) for i in c.grads]
    to_plumb = [t[1] if isinstance(t, tuple) else None for t in targets]
    targets = [t[0] if isinstance(t, tuple) else t for t in targets]
    up = tf.constant(cast(gout, dtype))
    grads = tape.gradient(y, targets, output_gradients=up) if targets else []
    grads = [g if f is None or g is None else f(as_array(g, dtype)) for g, f in zip(grads, to_plumb)]
    return y, grads, extras, gout


def record_case(c, dtype, root):
    seed = zlib.crc32(f"{c.op}/{c.name}".encode()) & 0x7FFFFFFF
    rng = np.random.default_rng(seed)
    arrays = [cast(np.asarray(a), dtype) for a in c.make(rng)]
    d = os.path.join(root, c.op, f"{c.name}_{SUFFIX[dtype]}")
    os.makedirs(d)
    meta = {
        "op": c.op, "case": f"{c.name}_{SUFFIX[dtype]}", "kind": c.kind, "attrs": c.attrs, "dtype": dtype,
        "seed": seed, "tolerance": c.tol, "tensorflow": tf.__version__, "keras": keras.__version__,
        "numpy": np.__version__,
    }
    if c.kind == "optimizer":
        var0, grads = arrays[0], arrays[1:]
        save(os.path.join(d, "in0.npy"), var0)
        for k, (g, v) in enumerate(zip(grads, c.fn(var0, grads)), 1):
            save(os.path.join(d, f"step{k}_grad.npy"), g)
            save(os.path.join(d, f"step{k}_var.npy"), as_array(v, dtype))
        meta["steps"] = len(grads)
    elif c.kind == "decode":
        paths, scores = c.fn(arrays)
        for i, a in enumerate(arrays):
            save(os.path.join(d, f"in{i}.npy"), a)
        save(os.path.join(d, "paths.npy"), np.asarray(paths, np.int64))
        save(os.path.join(d, "out.npy"), np.asarray(scores).astype(dtype))
        meta["inputs"] = len(arrays)
    else:
        gout = None
        for prefix, dt, xs_in in [("", dtype, arrays)] + ([("truth_", "float64", [cast(a, "float64") for a in arrays])]
                                                          if dtype == "float32" and c.truth else []):
            # The second pass is the float32 case's truth: the same function
            # in float64 on the same (float32-rounded) inputs and upstream
            # gradient, written as truth_<tensor>.npy.
            y, grads, extras, gout = run_op(c, xs_in, dt, rng, gout)
            if not prefix:
                for i, a in enumerate(arrays):
                    save(os.path.join(d, f"in{i}.npy"), a)
                save(os.path.join(d, "gout.npy"), gout)
            save(os.path.join(d, f"{prefix}out.npy"), as_array(y, dt))
            for i, g in zip(c.grads, grads):
                g = np.zeros(arrays[i].shape, dt) if g is None else as_array(g, dt)
                save(os.path.join(d, f"{prefix}grad{i}.npy"), g)
            for i, v in sorted(extras.items()):
                save(os.path.join(d, f"{prefix}after{i}.npy"), as_array(v, dt))
        meta["inputs"] = len(arrays)
        meta["grads"] = c.grads
        meta["after"] = sorted(extras)
        if c.params is not None:
            meta["params"] = c.params
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def record(root, only):
    cases = [c for c in CASES if only is None or c.op == only]
    if not cases:
        sys.exit(f"record.py: no cases for op {only!r}")
    for op in sorted({c.op for c in cases}):
        shutil.rmtree(os.path.join(root, op), ignore_errors=True)
    for c in cases:
        for dtype in c.dtypes:
            record_case(c, dtype, root)
    return cases


def check(only):
    """Re-records into a temporary folder and compares every file byte for byte."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = record(tmp, only)
        bad = []
        for op in sorted({c.op for c in cases}):
            bad += compare_trees(os.path.join(tmp, op), os.path.join(TESTDATA, op), op)
    for b in bad:
        print("record.py --check:", b)
    if bad:
        sys.exit(1)
    print(f"record.py --check: {sum(len(c.dtypes) for c in cases)} cases reproduce the committed goldens")


def compare_trees(new, old, rel):
    if not os.path.isdir(old):
        return [f"{rel}: missing from the committed goldens"]
    cmp = filecmp.dircmp(new, old)
    bad = [f"{rel}/{n}: not in the committed goldens" for n in cmp.left_only]
    bad += [f"{rel}/{n}: committed but no longer recorded" for n in cmp.right_only]
    for n in cmp.common_files:
        if not filecmp.cmp(os.path.join(new, n), os.path.join(old, n), shallow=False):
            bad.append(f"{rel}/{n}: differs")
    for n in cmp.common_dirs:
        bad += compare_trees(os.path.join(new, n), os.path.join(old, n), f"{rel}/{n}")
    return bad


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", metavar="OP", help="record (or check) only this op's cases")
    p.add_argument("--check", action="store_true", help="re-record into a temp dir and compare with the goldens")
    a = p.parse_args()
    if a.check:
        check(a.only)
    else:
        cases = record(TESTDATA, a.only)
        print(f"record.py: wrote {sum(len(c.dtypes) for c in cases)} cases under {os.path.relpath(TESTDATA, REPO)}")


if __name__ == "__main__":
    main()
