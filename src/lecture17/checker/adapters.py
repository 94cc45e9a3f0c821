"""A student's torch classes in `tiny_transformer`'s place (`check --trained`).

`install(namespace, student)` runs at the end of `tiny_transformer` in a scratch copy of the
mutants' control build (checker/trained.py appends the call there). It rebinds
MultiHeadAttention, EncoderLayer and DecoderLayer to adapters: subclasses of the reference's
classes (so `isinstance` and `collect_attention` still find them) that hold the student's
module and speak the reference's interface:

- `MultiHeadAttention.forward(query, key, value, mask=None, need_weights=False,
  is_causal=False)` -> (output, weights): `is_causal` is ANDed into the mask (1/True = may
  attend) before the student's `forward(query, key, value, mask)`; a student forward that
  returns only the output gives weights None.
- `EncoderLayer.forward(x, mask=None)`, `DecoderLayer.forward(x, memory, self_mask=None,
  memory_mask=None, is_causal=True)`: the student's layer applies the look-ahead mask itself
  (the lecture's decoder always does), so a `self_mask` is passed only when given.
- What the lecture does not ask of a student runs the reference: a layer built with RoPE or
  ALiBi (`positions`), or with `scale=False` when the student's constructor takes no `scale`,
  is the reference's class. Decoding with a KV cache runs the student's forward on the cached
  inputs (the cache keeps x, not K and V): the same numbers as decoding without the cache.
  `load_from_torch` is the reference's alone: checker/trained.py does not rerun a job that
  calls it (the job keeps the control's numbers, and the page says so).

The reference's upper blocks call the student's lower ones: a student MultiHeadAttention runs
inside the reference's EncoderLayer and DecoderLayer.
"""

import importlib
import inspect

from torch import nn

CLASSES = ("MultiHeadAttention", "EncoderLayer", "DecoderLayer")


def accepts(cls, name: str) -> bool:
    """Whether cls(...) takes a keyword `name` (or **kwargs)."""
    params = inspect.signature(cls).parameters
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def build(cls, *args, **options):
    """cls(*args, **options) with only the options its constructor takes."""
    return cls(*args, **{k: v for k, v in options.items() if accepts(cls, k)})


def output_and_weights(result):
    """A student forward's result -> (output, weights or None)."""
    if isinstance(result, tuple | list):
        return result[0], (result[1] if len(result) > 1 else None)
    return result, None


def install(namespace: dict, student_module: str, classes=CLASSES) -> list[str]:
    """Rebind `classes` (those the student wrote) to adapters of `student_module`'s in
    `namespace` (tiny_transformer's globals); returns their names."""
    student = importlib.import_module(student_module)
    found = [n for n in classes if isinstance(getattr(student, n, None), type)]
    tt = namespace
    if "MultiHeadAttention" in found:
        tt["MultiHeadAttention"] = _attention_adapter(tt, student.MultiHeadAttention)
        _reroute_attention_steps(tt)
    if "EncoderLayer" in found:
        tt["EncoderLayer"] = _encoder_adapter(tt["EncoderLayer"], student.EncoderLayer)
    if "DecoderLayer" in found:
        tt["DecoderLayer"] = _decoder_adapter(tt["DecoderLayer"], student.DecoderLayer)
        _reroute_decoder_caches(tt)
    return found


def _needs_reference(cls, scale, positions) -> bool:
    """What the lecture does not ask of a student: RoPE or ALiBi, or scale=False that the
    student's constructor cannot take."""
    return positions is not None or (scale is False and not accepts(cls, "scale"))


def _attention_adapter(tt: dict, theirs):
    """The reference's MultiHeadAttention holding the student's (`theirs`)."""
    ref_mha, causal_mask = tt["MultiHeadAttention"], tt["causal_mask"]

    class MultiHeadAttention(ref_mha):
        __doc__ = ref_mha.__doc__

        def __init__(self, d_model, n_heads, scale=True, positions=None):
            if _needs_reference(theirs, scale, positions):
                ref_mha.__init__(self, d_model, n_heads, scale, positions)
                self.inner = None
                return
            nn.Module.__init__(self)
            self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
            self.scale, self.positions = scale, positions
            self.keep_weights, self.last_weights = False, None
            options = {} if scale is True else {"scale": scale}
            self.inner = build(theirs, d_model, n_heads, **options)

        def forward(self, query, key, value, mask=None, need_weights=False, is_causal=False):
            if self.inner is None:
                return ref_mha.forward(self, query, key, value, mask, need_weights, is_causal)
            if is_causal:
                causal = causal_mask(query.shape[1], key.shape[1], query.device)
                mask = causal if mask is None else mask.bool() & causal
            out, weights = output_and_weights(self.inner(query, key, value, mask))
            if self.keep_weights:
                self.last_weights = weights
            return out, weights

    return MultiHeadAttention


def _reroute_attention_steps(tt: dict) -> None:
    """KV-cache decoding through a student's attention: the cache keeps x, not K and V, and
    each step runs the student's forward on the cached inputs."""
    memory_kv, self_step, cross_step = (
        tt["memory_keys_values"],
        tt["self_attend_step"],
        tt["cross_attend_step"],
    )

    def memory_keys_values(attn, memory):
        if getattr(attn, "inner", None) is None:
            return memory_kv(attn, memory)
        return memory[:, None], memory[:, None]  # the cache keeps x: (b, 1, n, d_model)

    def self_attend_step(attn, x, cache):
        if getattr(attn, "inner", None) is None:
            return self_step(attn, x, cache)
        seen = cache.append(x[:, None], x[:, None])[0][:, 0]  # (b, t, d_model)
        return attn(x, seen, seen)[0]

    def cross_attend_step(attn, x, cache):
        if getattr(attn, "inner", None) is None:
            return cross_step(attn, x, cache)
        memory = cache.memory_k[:, 0]
        return attn(x, memory, memory)[0]

    tt.update(
        memory_keys_values=memory_keys_values,
        self_attend_step=self_attend_step,
        cross_attend_step=cross_attend_step,
    )


def _init_layer(self, ref_cls, theirs, d_model, n_heads, d_ff, norm_first, scale, positions):
    """An encoder or decoder adapter's __init__: the reference's layer, or the student's."""
    if _needs_reference(theirs, scale, positions):
        ref_cls.__init__(self, d_model, n_heads, d_ff, norm_first, scale, positions)
        self.inner = None
        return
    nn.Module.__init__(self)
    self.norm_first = norm_first
    options = {"norm_first": norm_first} | ({} if scale is None else {"scale": scale})
    self.inner = build(theirs, d_model, n_heads, d_ff, **options)


def _encoder_adapter(ref_enc, theirs):
    """The reference's EncoderLayer holding the student's (`theirs`)."""

    class EncoderLayer(ref_enc):
        __doc__ = ref_enc.__doc__

        def __init__(self, d_model, n_heads, d_ff, norm_first=False, scale=None, positions=None):
            _init_layer(self, ref_enc, theirs, d_model, n_heads, d_ff, norm_first, scale, positions)

        def forward(self, x, mask=None):
            if self.inner is None:
                return ref_enc.forward(self, x, mask)
            return self.inner(x) if mask is None else self.inner(x, mask)

    return EncoderLayer


def _decoder_adapter(ref_dec, theirs):
    """The reference's DecoderLayer holding the student's (`theirs`)."""

    class DecoderLayer(ref_dec):
        __doc__ = ref_dec.__doc__

        def __init__(self, d_model, n_heads, d_ff, norm_first=False, scale=None, positions=None):
            _init_layer(self, ref_dec, theirs, d_model, n_heads, d_ff, norm_first, scale, positions)

        def forward(self, x, memory, self_mask=None, memory_mask=None, is_causal=True):
            if self.inner is None:
                return ref_dec.forward(self, x, memory, self_mask, memory_mask, is_causal)
            masks = [self_mask, memory_mask]
            while masks and masks[-1] is None:
                masks.pop()
            return self.inner(x, memory, *masks)

        def step(self, x, cache):
            if self.inner is None:
                return ref_dec.step(self, x, cache)
            seen = cache.append(x[:, None], x[:, None])[0][:, 0]  # (b, t, d_model)
            return self.inner(seen, cache.memory_k[:, 0])[:, -1:]

    return DecoderLayer


def _reroute_decoder_caches(tt: dict) -> None:
    """Decoder caches for a student's layers: the cross-attention's cache keeps memory itself."""
    kv_cache, memory_kv_inner = tt["KVCache"], tt["memory_keys_values"]

    class Marker:  # what start_caches reads as the layer's cross_attn
        inner = True

    def memory_keys_values_dec(attn, memory):
        if attn is Marker:
            return memory[:, None], memory[:, None]
        return memory_kv_inner(attn, memory)

    tt["memory_keys_values"] = memory_keys_values_dec
    decoder = tt["Decoder"]
    start_caches = decoder.start_caches

    def start_caches_student(self, memory):
        if all(getattr(layer, "inner", None) is None for layer in self.layers):
            return start_caches(self, memory)
        return [
            kv_cache(*tt["memory_keys_values"](_cross(layer, Marker), memory))
            for layer in self.layers
        ]

    decoder.start_caches = start_caches_student


def _cross(layer, marker):
    """The cross-attention whose K, V a layer's cache holds (a marker for a student's layer)."""
    return marker if getattr(layer, "inner", None) is not None else layer.cross_attn
