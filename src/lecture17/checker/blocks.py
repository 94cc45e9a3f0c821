"""The lecture's numpy blocks a student may write, and how a student's block is swapped in.

A student's file defines any of `BLOCKS` with `attention_numpy`'s names. `install` puts each
one into `attention_numpy` and into every module that imported the reference's function by
name (namespace injection; no file the build hashes is touched), so the reference's upper
blocks call the student's lower ones: a student `softmax` reaches every demo through the
reference's `scaled_dot_product_attention`.

A call is bound to the reference's signature first. Its positional parameters go to the
student's function by position (a student may call Q `q`); a keyword-only argument goes by
name. An argument the student's function does not take runs the reference when its value is
not the default (`bias`, `positions`, beyond the lecture), and so does a call that raises
NotImplementedError (the template's bodies); `Swap.fallbacks` counts them, per reason.
`out=` (the in-place softmax of §3.4) is the exception: the student's result is copied into
`out`, so a student softmax runs inside the reference's attention.

The student's function gets copies of its arrays (and of the dicts and lists that hold
them): the caller, and the reference it is compared with, always see the original. A block
that changes what it was given is recorded (`Swap.mutated`), its own finding.

A result is taken as it is written: its shape must be the lecture's, up to leading axes of
length 1 (they broadcast the same way). A mask with an axis in another place does not
broadcast like the lecture's and is refused (`check_shape`); the one adapted shape is the
named convention (b, 1, 1, n) of TensorFlow's padding mask (checker/conventions.py).
"""

import copy
import inspect
from dataclasses import dataclass, field

import numpy as np

from lecture17 import attention_numpy

# name -> (the lecture's §, what it is, in the page's words); the order is the lecture's
BLOCKS = {
    "softmax": ("§2.2", "softmax"),
    "scaled_dot_product_attention": ("§3.1", "缩放点积注意力 scaled dot-product attention"),
    "split_heads": ("§5.3", "把 d_model 切成多个头 split heads"),
    "combine_heads": ("§5.3", "把多个头拼回去 combine heads"),
    "multi_head_attention": ("§5.2", "多头注意力 multi-head attention"),
    "count_mha_params": ("§5.2", "多头注意力的参数个数"),
    "positional_encoding": ("§6.2", "正弦位置编码 positional encoding"),
    "relative_shift_matrix": ("§6.3", "平移 k 的旋转矩阵 M_k"),
    "feed_forward": ("§7.2", "前馈网络 feed-forward network"),
    "layer_norm": ("§7.3", "层归一化 LayerNorm"),
    "encoder_layer_forward": ("§7.1", "编码器层 encoder layer"),
    "create_look_ahead_mask": ("§8.1", "look-ahead mask"),
    "create_padding_mask": ("§8.3", "padding mask"),
    "decoder_layer_forward": ("§8.2", "解码器层 decoder layer"),
}
# arguments the lecture's blocks take beyond the lecture (§6.5's positions, ALiBi's bias, the
# in-place softmax of §3.4): a student's block need not take them
BEYOND = {"softmax": ("out",), "scaled_dot_product_attention": ("bias",)}
BEYOND |= {"multi_head_attention": ("positions",)}
# blocks whose inputs are numbers, not arrays: nothing of the caller's to change
SCALAR_INPUTS = ("count_mha_params", "positional_encoding", "relative_shift_matrix")
SCALAR_INPUTS += ("create_look_ahead_mask",)


def reference(name: str):
    return getattr(attention_numpy, name)


def signature_text(name: str) -> str:
    """The lecture's signature of a block, without the arguments beyond the lecture."""
    sig = inspect.signature(reference(name))
    kept = [p for p in sig.parameters.values() if p.name not in BEYOND.get(name, ())]
    return f"{name}{sig.replace(parameters=kept)}"


def required(name: str) -> list[str]:
    """The reference's parameters without a default: a student's block must take them."""
    sig = inspect.signature(reference(name))
    return [p.name for p in sig.parameters.values() if p.default is inspect.Parameter.empty]


def signature_problem(name: str, fn) -> str:
    """ "" when `fn` can be called as the lecture's block is; else what is wrong, in words."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ""  # a builtin or a C function: trust it, a bad call shows as a crash
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return ""
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    needed = required(name)
    # a required parameter is fine where the lecture's block has a parameter at its position
    # (Coursera's `mask` without a default): every call passes a value there
    ref_positional = [
        p
        for p in inspect.signature(reference(name)).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    extra = [
        p.name
        for p in positional[len(ref_positional) :] + [p for p in params if p.kind is p.KEYWORD_ONLY]
        if p.default is inspect.Parameter.empty
    ]
    if len(positional) < len(needed) or extra:
        return (
            f"{name} 的参数 parameters 是 ({', '.join(p.name for p in params)})；"
            f"讲义的是 {signature_text(name)}"
        )
    return ""


def _is_default(value, default) -> bool:
    if default is inspect.Parameter.empty:
        return False
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):
        return False


@dataclass
class Swap:
    """One student block in place of the reference's: how its calls went."""

    name: str
    student: object
    calls: int = 0  # calls that ran the student's code
    fallbacks: dict = field(default_factory=dict)  # why -> calls that ran the reference
    adapt: object = None  # a convention adapter (checker/conventions.py), or None
    check_shapes: bool = True  # compare each result's shape with the reference's
    mutated: dict = field(default_factory=dict)  # argument -> calls that changed it in place
    first_change: dict = field(default_factory=dict)  # argument -> (where, before, after)

    def __post_init__(self):
        self.ref = reference(self.name)
        self.ref_sig = inspect.signature(self.ref)
        try:
            params = inspect.signature(self.student).parameters.values()
        except (TypeError, ValueError):
            params = []
        self.varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
        self.varkw = any(p.kind is p.VAR_KEYWORD for p in params)
        self.positional = sum(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params
        )
        self.keywords = {p.name for p in params if p.kind is not p.VAR_POSITIONAL}

    def arguments(self, args, kwargs) -> tuple[tuple, dict] | str:
        """The call as the student's function takes it, or why it must run the reference."""
        bound = self.ref_sig.bind(*args, **kwargs)
        bound.apply_defaults()
        pos, kw = [], {}
        for i, (pname, p) in enumerate(self.ref_sig.parameters.items()):
            value = bound.arguments[pname]
            if p.kind is p.KEYWORD_ONLY:
                if pname in self.keywords or self.varkw:
                    kw[pname] = value
                elif pname == "out":  # where to write: the student's result is copied there
                    continue
                elif not _is_default(value, p.default):
                    return f"参数 {pname}"
            elif self.varargs or i < self.positional:
                pos.append(value)
            elif pname in self.keywords or self.varkw:  # the student's keyword-only `mask`
                kw[pname] = value
            elif not _is_default(value, p.default):
                return f"参数 {pname}"
        return tuple(pos), kw

    def __call__(self, *args, **kwargs):
        mapped = self.arguments(args, kwargs)
        if isinstance(mapped, str):
            return self._fallback(mapped, args, kwargs)
        pos, kw = mapped
        given = (copy.deepcopy(pos), copy.deepcopy(kw))
        try:
            if self.adapt is not None:
                result = self.adapt(self.student, given[0], given[1])
            else:
                result = self.student(*given[0], **given[1])
        except NotImplementedError:
            return self._fallback("NotImplementedError", args, kwargs)
        self._note_mutations(pos, kw, given)
        self.calls += 1
        if self.check_shapes:
            plain = {k: v for k, v in kwargs.items() if k != "out"}  # never write into out twice
            result = check_shape(self.name, result, self.ref(*args, **plain))
        out = kwargs.get("out")
        if out is not None and "out" not in kw:  # softmax(scores, out=scores) of §3.4
            out[...] = result
            return out
        return result

    def _note_mutations(self, pos, kw, given) -> None:
        names = list(self.ref_sig.parameters)
        pairs = [
            (names[i] if i < len(names) else f"#{i}", a, b)
            for i, (a, b) in enumerate(zip(pos, given[0], strict=True))
        ]
        pairs += [(k, kw[k], given[1][k]) for k in kw]
        for name, original, seen in pairs:
            if not same_content(original, seen):
                self.mutated[name] = self.mutated.get(name, 0) + 1
                self.first_change.setdefault(name, first_difference(original, seen))

    def _fallback(self, why, args, kwargs):
        self.fallbacks[why] = self.fallbacks.get(why, 0) + 1
        return self.ref(*args, **kwargs)


class WrongShape(ValueError):
    """A student's block returned another shape (or number of arrays) than the lecture's."""


class MissingArgument(TypeError):
    """A property passed an argument of the lecture's block that the student's does not take."""


def same_content(a, b) -> bool:
    """Whether `b` (the copy the student was given) still holds what `a` holds (NaN = NaN)."""
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_content(a[k], b[k]) for k in a)
        )
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_content(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    return True


def first_difference(a, b) -> tuple:
    """(where, before, after) of the first element an array changed, for the message; for
    anything else ((), a, b) as given."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
        differ = np.argwhere(
            ~((a == b) | (np.isnan(a) & np.isnan(b))) if a.dtype.kind in "fc" else a != b
        )
        if len(differ):
            at = tuple(int(i) for i in differ[0])
            return at, a[at].item(), b[at].item()
    return (), "…", "…"


def _shapes(result):
    if isinstance(result, tuple | list):
        return tuple(_shapes(r) for r in result)
    if isinstance(result, int | float | np.number) or np.shape(result) == ():
        return "一个数 a number"  # 4, np.int64(4) and np.array(4.0) alike
    return getattr(result, "shape", type(result).__name__)


MASKS = ("create_look_ahead_mask", "create_padding_mask")


def _strip(shape: tuple) -> tuple:
    """A shape without its leading axes of length 1 (they broadcast as if absent)."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def broadcasts_alike(got, want) -> bool:
    """Whether an array of shape `got` broadcasts wherever one of shape `want` does, the same
    way: equal shapes up to leading axes of length 1."""
    return all(isinstance(s, int) for s in (*got, *want)) and _strip(got) == _strip(want)


def check_shape(name: str, result, expected):
    """`result`, or WrongShape naming both shapes. A result whose shape differs from the
    lecture's only by leading axes of length 1 broadcasts the same way: accepted, given the
    lecture's shape. Anything else is refused, a padding mask's query axis named apart."""
    got, want = _shapes(result), _shapes(expected)
    if got == want:
        return result
    if isinstance(got, tuple) and isinstance(want, tuple) and broadcasts_alike(got, want):
        return np.asarray(result).reshape(want)
    if _several(got, want) and all(broadcasts_alike(g, w) for g, w in zip(got, want, strict=True)):
        return type(result)(
            np.asarray(r).reshape(w) for r, w in zip(result, want, strict=True)
        )  # (output, weights) each with a leading axis of 1
    error = WrongShape(shape_words(name, got, want))
    error.block = name
    raise error


def _several(got, want) -> bool:
    """Whether both are the shapes of several arrays, as many on each side."""
    return (
        isinstance(got, tuple)
        and isinstance(want, tuple)
        and len(got) == len(want)
        and all(isinstance(g, tuple) for g in got)
        and all(isinstance(w, tuple) for w in want)
    )


def shape_words(name: str, got, want) -> str:
    """What a wrong shape does, in words: a (b, n, 1) padding mask masks queries."""
    text = f"{name} 返回的形状 shape 是 {got}，讲义的是 {want}"
    if (
        name == "create_padding_mask"
        and isinstance(got, tuple)
        and isinstance(want, tuple)
        and len(want) == 3
        and len(got) == 3
        and got == (want[0], want[2], 1)
        and want[2] != 1
    ):
        text += "：(b, n, 1) 屏蔽的是 query（行）；讲义的 (b, 1, n) 屏蔽 key（列）"
    elif isinstance(got, tuple) and isinstance(want, tuple):
        text += "：两者广播 broadcast 的方式不一样"
    return text


def install(swaps: dict[str, Swap], modules) -> None:
    """Put each swap where the reference's function was: attention_numpy's namespace, and
    every module in `modules` that bound the reference's function to a name of its own."""
    originals = {id(s.ref): s for s in swaps.values()}
    for swap in swaps.values():
        setattr(attention_numpy, swap.name, swap)
    for module in modules:
        for key, value in list(vars(module).items()):
            if id(value) in originals and not key.startswith("__"):
                setattr(module, key, originals[id(value)])
