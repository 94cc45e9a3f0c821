"""代码 04 · 编码器层与解码器层 Encoder and decoder layers (lecture §7–§8).

Demos of the lecture's script 04 (demo 3, Post-LN vs Pre-LN, trains with torch):

    04.1  encoder_vs_torch        §7.4  numpy encoder layer = nn.TransformerEncoderLayer;
                                        where the base model's parameters are
    04.2  layernorm_vs_batchnorm  §7.3  BatchNorm depends on the batch, LayerNorm does not
    04.3  post_vs_pre_ln          §7.5  Post-LN fails at lr 1e-2 without warmup, Pre-LN does not
    04.4  look_ahead_mask         §8.1  no output sees a later input (weights, outputs, Jacobian)
    04.5  decoder_vs_torch        §8.2, §8.4  numpy decoder layer = nn.TransformerDecoderLayer;
                                        all positions at once = one prefix at a time
    04.6  padding_mask            §8.3  padding + mask = the short sentence alone

References: Vaswani et al. (2017), "Attention is all you need", §3.1–§3.2 and Table 3;
Ba, Kiros & Hinton (2016), "Layer normalization"; Xiong et al. (2020), "On layer
normalization in the Transformer architecture" (Pre-LN).

Every function follows the demo contract (docs/ARCHITECTURE.md): keyword-only settings from
config/config.yaml, a `seed`, and a tidy DataFrame (label columns, `quantity`, `value`).
torch is imported inside the functions that need it, after torch.set_num_threads(1) (§0.5).

Long on purpose: one module per lecture script (the registry maps the lecture's "代码 0x" to it),
each demo's function beside its helpers; a job depends only on the lines its function runs
(pipeline.deps.code_parts), so the module's length costs no reruns.
"""

from dataclasses import replace

import numpy as np
import pandas as pd

from lecture17.attention_numpy import (
    count_decoder_layer_params,
    count_encoder_layer_params,
    count_mha_params,
    create_look_ahead_mask,
    create_padding_mask,
    decoder_layer_forward,
    decoder_layer_params_from_torch,
    encoder_layer_forward,
    encoder_layer_params_from_torch,
    layer_norm,
    multi_head_attention,
    scaled_dot_product_attention,
)
from lecture17.experiments.tidy import row, rows, tidy
from lecture17.train_settings import TrainSettings

# §7.5: PyTorch's name for the placement of LayerNorm, and the label we print for it
PLACEMENTS = {"post_ln": False, "pre_ln": True}

# -------------------------------------------------------------------------------------------
# helpers


def _torch(seed: int):
    """Import torch single-threaded (§0.5) and return it with a generator seeded by `seed`."""
    import torch

    torch.set_num_threads(1)
    return torch, torch.Generator().manual_seed(seed)


def _randomize_(module, generator) -> None:
    """Redraw every parameter from `generator`, so nothing depends on torch's global RNG.

    Matrices get N(0, 1/fan_in) (PyTorch stores (out, in), so fan_in is the last axis);
    LayerNorm gains 1 + N(0, 0.1²) and every bias N(0, 0.1²). Nothing is left at 1 or 0, so
    a gamma/beta or bias copied to the wrong place cannot go unnoticed in the comparisons.
    """
    import torch

    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=generator, dtype=p.dtype)
            if p.ndim == 2:
                p.copy_(noise / p.shape[1] ** 0.5)
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.1 * noise)
            else:
                p.copy_(0.1 * noise)


def _random_layer(layer_class, d_model, n_heads, d_ff, norm_first, generator):
    """A float64 nn.Transformer{Encoder,Decoder}Layer, dropout off, random parameters."""
    import torch

    kw = {"dropout": 0.0, "batch_first": True, "norm_first": norm_first, "dtype": torch.float64}
    layer = layer_class(d_model, n_heads, d_ff, **kw)
    _randomize_(layer, generator)
    return layer.eval()


def _additive_mask(torch, mask: np.ndarray):
    """Our 0/1 mask (1 = may attend) as the float mask PyTorch adds to the scores (§8.1)."""
    return torch.from_numpy((1 - mask) * -1e9)  # (n, n); §8.1's -1e9, as attention_numpy


def _numel(module) -> int:
    """The number of parameters of a PyTorch module (§7.4's counts)."""
    return sum(p.numel() for p in module.parameters())


def _with_affine(norm, gamma: np.ndarray, beta: np.ndarray):
    """A PyTorch norm layer whose gain and bias are set to gamma, beta (float64 numpy)."""
    import torch

    with torch.no_grad():
        norm.weight.copy_(torch.from_numpy(gamma))
        norm.bias.copy_(torch.from_numpy(beta))
    return norm


# -------------------------------------------------------------------------------------------
# 04.1 numpy encoder layer = nn.TransformerEncoderLayer; parameter counts (§7.4)


def _base_model_counts(
    torch, d_model: int, d_ff: int, n_heads: int, n_layers: int, vocab_size: int
) -> dict[str, tuple[int, int]]:
    """§7.4: the base model's parameters part by part, (closed-form count, PyTorch's numel).

    The PyTorch modules are built on the meta device: shapes only, no memory, no init.
    """
    nn = torch.nn
    kw = {"dropout": 0.0, "batch_first": True, "device": "meta"}
    enc = nn.TransformerEncoderLayer(d_model, n_heads, d_ff, **kw)
    dec = nn.TransformerDecoderLayer(d_model, n_heads, d_ff, **kw)
    enc_stack = nn.TransformerEncoder(enc, n_layers, enable_nested_tensor=False)
    dec_stack = nn.TransformerDecoder(dec, n_layers)
    embedding = nn.Embedding(vocab_size, d_model, device="meta")  # shared by src, tgt, output
    # attention_numpy counts MHA and whole layers; the FFN and the LayerNorms follow from them:
    # a decoder layer is an encoder layer plus one more MHA and one more LayerNorm
    mha, enc_layer = count_mha_params(d_model), count_encoder_layer_params(d_model, d_ff)
    dec_layer = count_decoder_layer_params(d_model, d_ff)
    one_norm = dec_layer - enc_layer - mha
    ffn = enc_layer - mha - 2 * one_norm
    counts = {  # part: (numpy count, torch numel)
        "mha": (mha, _numel(enc.self_attn)),
        "ffn": (ffn, _numel(enc.linear1) + _numel(enc.linear2)),
        "layer_norms": (2 * one_norm, _numel(enc.norm1) + _numel(enc.norm2)),
        "encoder_layer": (enc_layer, _numel(enc)),
        "decoder_layer": (dec_layer, _numel(dec)),
        "encoder_stack": (n_layers * enc_layer, _numel(enc_stack)),
        "decoder_stack": (n_layers * dec_layer, _numel(dec_stack)),
        "embedding": (vocab_size * d_model, _numel(embedding)),
    }
    counts["total"] = tuple(
        sum(counts[part][i] for part in ("encoder_stack", "decoder_stack", "embedding"))
        for i in (0, 1)
    )
    return counts


def _base_model_parameters(torch, *sizes) -> list[dict]:
    """§7.4's rows: `part` → `params_numpy`, `params_torch` (`_base_model_counts`, sizes
    d_model, d_ff, n_heads, n_layers, vocab_size), and `ffn_to_attention` per encoder layer
    and for the whole model."""
    counts, n_layers = _base_model_counts(torch, *sizes), sizes[3]
    records = [
        row(q, v, part=part)
        for part, pair in counts.items()
        for q, v in zip(("params_numpy", "params_torch"), pair, strict=True)
    ]
    # flag F05: "FFN = 2x attention" holds per encoder layer; decoder layers have two MHAs
    mha, ffn = counts["mha"][0], counts["ffn"][0]
    n_attention = n_layers * mha + n_layers * 2 * mha
    return records + [
        row("ffn_to_attention", ffn / mha, part="encoder_layer"),
        row("ffn_to_attention", 2 * n_layers * ffn / n_attention, part="model"),
    ]


def encoder_vs_torch(
    *,
    d_model: int,
    n_heads: int,
    d_ff: int,
    seq_len: int,
    batch_size: int,
    base_d_model: int,
    base_d_ff: int,
    base_n_heads: int,
    base_n_layers: int,
    vocab_size: int,
    seed: int,
) -> pd.DataFrame:
    """attention_numpy.encoder_layer_forward vs nn.TransformerEncoderLayer, and the base model.

    Rows: `placement` (post_ln, pre_ln) → `max_abs_diff` between the two layers with the same
    random parameters (float64, dropout 0) on a random (batch_size, seq_len, d_model) input;
    `part` → `params_numpy` (attention_numpy's counts) and `params_torch` (numel of the
    PyTorch modules) of the base model; `part` (encoder_layer, model) → `ffn_to_attention`.
    """
    torch, gen = _torch(seed)
    records = []
    for placement, norm_first in PLACEMENTS.items():
        layer = _random_layer(
            torch.nn.TransformerEncoderLayer, d_model, n_heads, d_ff, norm_first, gen
        )
        x = torch.randn(batch_size, seq_len, d_model, generator=gen, dtype=torch.float64)
        # autograd stays on: that keeps PyTorch off its fused inference path, so we compare
        # against the layer's documented computation (§7.1)
        ours = encoder_layer_forward(
            x.numpy(), encoder_layer_params_from_torch(layer), n_heads, norm_first=norm_first
        )  # (b, n, d_model)
        theirs = layer(x).detach().numpy()  # (b, n, d_model)
        diff = np.abs(ours - theirs).max()
        records.append(row("max_abs_diff", diff, placement=placement))
    records += _base_model_parameters(
        torch, base_d_model, base_d_ff, base_n_heads, base_n_layers, vocab_size
    )
    return tidy(records, ["placement", "part"])


# -------------------------------------------------------------------------------------------
# 04.2 LayerNorm vs BatchNorm (§7.3)


def _batch(sentence, others, pad, padded_len):
    """Stack the sentence and the other sentences, each padded with `pad` to padded_len."""
    rows = []
    for words in [sentence, *others]:
        padding = np.tile(pad, (padded_len - len(words), 1))  # (padded_len - len, d_model)
        rows.append(np.concatenate([words, padding]))  # (padded_len, d_model)
    return np.stack(rows)  # (batch_size, padded_len, d_model)


def _sentence_batches(rng, d_model: int, sentence_len: int, padded_len: int, batch_size: int):
    """§7.3's batches, drawn in this order: batch A (the sentence among batch_size − 1 random
    sentences of random lengths, all padded with one pad vector) and its two variations,
    `batch` (new other sentences) and `padding` (a new pad vector)."""

    def other_sentences():
        lengths = rng.integers(1, padded_len + 1, size=batch_size - 1)
        return [rng.standard_normal((n, d_model)) for n in lengths]

    sentence = rng.standard_normal((sentence_len, d_model))  # (sentence_len, d_model)
    others, pad = other_sentences(), rng.standard_normal(d_model)
    batch_a = _batch(sentence, others, pad, padded_len)  # (b, padded_len, d_model)
    variants = {
        "batch": _batch(sentence, other_sentences(), pad, padded_len),
        "padding": _batch(sentence, others, rng.standard_normal(d_model), padded_len),
    }
    return batch_a, variants


def _change_rows(norms: dict, batch_a, variants: dict, sentence_len: int) -> list[dict]:
    """§7.3: (`norm`, `change`) → `max_abs_change` of the sentence's own outputs."""
    records = []
    for norm, fn in norms.items():
        out_a = fn(batch_a)[0, :sentence_len]  # (sentence_len, d_model), the sentence's own
        for change, batch in variants.items():
            moved = np.abs(fn(batch)[0, :sentence_len] - out_a).max()
            records.append(row("max_abs_change", moved, norm=norm, change=change))
    return records


def layernorm_vs_batchnorm(
    *, d_model: int, sentence_len: int, padded_len: int, batch_size: int, seed: int
) -> pd.DataFrame:
    """The same sentence in different batches: its BatchNorm outputs move, LayerNorm's do not.

    Batch A holds the sentence and batch_size − 1 other sentences (random words, random
    lengths), all padded with one pad vector to padded_len. Two variations of A:
    `change` = batch   → other sentences replaced by new ones (same pad vector);
    `change` = padding → the pad vector replaced by another one (same sentences).
    Rows: (`norm`, `change`) → `max_abs_change`, max |out_A − out_variant| over the sentence's
    own sentence_len × d_model outputs. BatchNorm = nn.BatchNorm1d in training mode (batch
    statistics) over all batch × position tokens per feature, padding included; LayerNorm =
    attention_numpy.layer_norm per token. Both use the same random gamma, beta.
    No label → `layer_norm_vs_torch`, max |layer_norm − nn.LayerNorm| on batch A.
    """
    torch, _ = _torch(seed)
    rng = np.random.default_rng(seed)
    gamma, beta = 1 + 0.1 * rng.standard_normal(d_model), 0.1 * rng.standard_normal(d_model)
    batch_a, variants = _sentence_batches(rng, d_model, sentence_len, padded_len, batch_size)
    bn = torch.nn.BatchNorm1d(d_model, dtype=torch.float64).train()  # batch statistics
    bn = _with_affine(bn, gamma, beta)

    def batch_norm(x):  # (b, n, d_model): every token of the batch is one sample
        tokens = torch.from_numpy(x.reshape(-1, d_model))  # (b * n, d_model)
        return bn(tokens).detach().numpy().reshape(x.shape)

    norms = {"batch_norm": batch_norm, "layer_norm": lambda x: layer_norm(x, gamma, beta)}
    records = _change_rows(norms, batch_a, variants, sentence_len)
    ln = _with_affine(torch.nn.LayerNorm(d_model, dtype=torch.float64), gamma, beta)
    theirs = ln(torch.from_numpy(batch_a)).detach().numpy()
    diff = np.abs(layer_norm(batch_a, gamma, beta) - theirs).max()
    records.append(row("layer_norm_vs_torch", diff))
    return tidy(records, ["norm", "change"])


# -------------------------------------------------------------------------------------------
# 04.3 Post-LN vs Pre-LN, and warmup (§7.5)

# setup -> (norm_first, with warmup?): §7.5's rows, Post-LN also with the 100-step warmup
LN_SETUPS = {"post_ln": (False, False), "pre_ln": (True, False), "post_ln_warmup": (False, True)}


def _classifier_builder(n_layers: int, d_model: int, n_heads: int, d_ff: int, norm_first: bool):
    """What train() calls under torch.manual_seed(seed): §7.5's encoder classifier."""
    from lecture17 import tiny_transformer, training

    def make_model():
        config = tiny_transformer.TransformerConfig(
            training.VOCAB_SIZE,
            training.VOCAB_SIZE,
            n_enc_layers=n_layers,
            d_model=d_model,
            n_heads=n_heads,
            d_ff=d_ff,
            norm_first=norm_first,
        )
        return tiny_transformer.EncoderClassifier(config)

    return make_model


def _initial_accuracy(make_model, task, seed: int, n_test: int, device: str) -> dict:
    """§7.5's step 0: the test-set accuracy of the very init train() builds under this seed."""
    import torch

    from lecture17 import training

    with training.single_thread():
        torch.manual_seed(seed)
        test = training.to_device(training.evaluation_set(task, seed, n_test), device)
        return task.evaluate(make_model().to(device), test)


def post_vs_pre_ln(
    *,
    setup: str,
    lr: float,
    length: int,
    train: TrainSettings,
    n_layers: int,
    d_model: int,
    n_heads: int,
    d_ff: int,
    device: str,
    seed: int,
) -> pd.DataFrame:
    """Train an n_layers encoder classifier on in-place reversal (§7.5) with Adam at `lr`.

    setup: post_ln or pre_ln without warmup, or post_ln_warmup (Post-LN, linear warmup over
    train.warmup steps). Rows: `accuracy` (per position, on the fixed test set) at every
    `step` 0, eval_every, 2 eval_every, …, steps (step 0 = the initialisation);
    `sequence_accuracy` after train.steps; `chance` (1 / number of symbols);
    `simulated_chance`: what InplaceReversalTask.evaluate gives a guesser answering every
    position with one of the 10 symbols uniformly at random (training.SymbolGuesser) over at
    least training.CHANCE_DRAWS = 100,000 guesses (standard error 0.00095). It guesses among
    the symbols a target can be; one over all 13 output classes would score 1/13 = 0.077.
    """
    from lecture17 import training

    training.check_device(device)
    if setup not in LN_SETUPS:
        raise ValueError(f"unknown setup {setup!r}; expected one of {tuple(LN_SETUPS)}")
    norm_first, warm = LN_SETUPS[setup]
    make_model = _classifier_builder(n_layers, d_model, n_heads, d_ff, norm_first)
    task = training.InplaceReversalTask(length)
    before = _initial_accuracy(make_model, task, seed, train.n_test, device)
    settings = replace(train, lr=lr, warmup=train.warmup if warm else 0)
    trained = training.train(make_model, task, settings, seed=seed, device=device)
    curve = [{"step": 0, **before}, *trained.evaluations]
    records = [row("accuracy", e["accuracy"], step=e["step"]) for e in curve]
    records += rows({"sequence_accuracy": trained.final["sequence_accuracy"]})
    records.append(row("chance", 1 / training.N_SYMBOLS))
    guessed = training.guessed_chance(task, training.SymbolGuesser, seed, train.n_test)
    records.append(row("simulated_chance", guessed["accuracy"]))
    return tidy(records, ["step"])


# -------------------------------------------------------------------------------------------
# 04.4 look-ahead mask (§8.1)


def _jacobian_blocks(torch, layer, y, memory, tgt_mask) -> np.ndarray:
    """‖∂ out_t / ∂ in_s‖_F for every (t, s) of one sequence through a decoder layer, (n, n)."""

    def forward(tokens):  # (n, d_model) -> (n, d_model)
        return layer(tokens[None], memory[None], tgt_mask=tgt_mask)[0]

    jac = torch.autograd.functional.jacobian(forward, y)  # (n, d_model, n, d_model)
    return jac.pow(2).sum(dim=(1, 3)).sqrt().numpy()  # (n, n): [t, s]


def _masked_attention_values(weights_qkv, x, x_new, mask, first_replaced: int) -> dict:
    """§8.1, single-head numpy attention: the largest weight above the diagonal, and the
    largest change of outputs 0..first_replaced−1 when the later inputs are replaced."""
    w_q, w_k, w_v = weights_qkv

    def attend(inputs):
        return scaled_dot_product_attention(inputs @ w_q, inputs @ w_k, inputs @ w_v, mask)

    (out, weights), (out_new, _) = attend(x), attend(x_new)  # (n, d_model), (n, n)
    future = np.triu(np.ones(weights.shape, dtype=bool), k=1)  # s > t
    change = np.abs(out_new[:first_replaced] - out[:first_replaced]).max()
    return {"max_weight_future": weights[future].max(), "max_change_past": change}


def _jacobian_values(torch, layer, y, memory, mask) -> dict:
    """§8.1 through a whole decoder layer: the largest and smallest ‖∂out_t/∂in_s‖_F, s > t."""
    tgt_mask = None if mask is None else _additive_mask(torch, mask)
    blocks = _jacobian_blocks(torch, layer, y, memory, tgt_mask)  # (n, n)
    future = blocks[np.triu(np.ones(blocks.shape, dtype=bool), k=1)]  # (n(n-1)/2,)
    return {"jacobian_future_max": future.max(), "jacobian_future_min": future.min()}


def look_ahead_mask(
    *,
    seq_len: int,
    first_replaced: int,
    d_model: int,
    n_heads: int,
    d_ff: int,
    src_len: int,
    seed: int,
) -> pd.DataFrame:
    """Position t never sees positions s > t once the look-ahead mask is on; without it, does.

    Rows: `mask` (look_ahead, none) →
    `max_weight_future`: largest attention weight above the diagonal (single-head numpy
        attention, random W^Q, W^K, W^V, on a random (seq_len, d_model) input);
    `max_change_past`: max change of outputs 0..first_replaced−1 when inputs
        first_replaced.. are replaced by new random vectors;
    `jacobian_future_max`, `jacobian_future_min`: largest and smallest ‖∂out_t/∂in_s‖_F over
        s > t for a whole nn.TransformerDecoderLayer (float64, random parameters, a random
        memory of src_len positions), by torch.autograd.
    """
    torch, gen = _torch(seed)
    rng = np.random.default_rng(seed)
    weights_qkv = rng.standard_normal((3, d_model, d_model)) / np.sqrt(d_model)
    x = rng.standard_normal((seq_len, d_model))  # (n, d_model)
    x_new = x.copy()
    x_new[first_replaced:] = rng.standard_normal((seq_len - first_replaced, d_model))

    layer = _random_layer(torch.nn.TransformerDecoderLayer, d_model, n_heads, d_ff, False, gen)
    y = torch.randn(seq_len, d_model, generator=gen, dtype=torch.float64)
    memory = torch.randn(src_len, d_model, generator=gen, dtype=torch.float64)

    records = []
    for name, mask in {"look_ahead": create_look_ahead_mask(seq_len), "none": None}.items():
        values = _masked_attention_values(weights_qkv, x, x_new, mask, first_replaced)
        records += rows(values | _jacobian_values(torch, layer, y, memory, mask), mask=name)
    return tidy(records, ["mask"])


# -------------------------------------------------------------------------------------------
# 04.5 numpy decoder layer = nn.TransformerDecoderLayer; parallel = step by step (§8.2, §8.4)


def _decoder_stack(y, memory, layers, n_heads):
    """A stack of numpy decoder layers (Post-LN) with the look-ahead mask, (b, n, d_model)."""
    mask = create_look_ahead_mask(y.shape[1])  # (n, n)
    for params in layers:
        y = decoder_layer_forward(y, memory, params, n_heads, self_mask=mask)
    return y


def _counted_decoding(torch, torch_layers, y, memory) -> tuple[dict, np.ndarray]:
    """Step-by-step decoding of the prefixes of y through PyTorch copies of the stack, without
    and with a KV cache (§8.4), and the positions each way computed, counted.

    The layers are tiny_transformer.DecoderLayers loaded from `torch_layers` (Post-LN, the
    parameters of the numpy stack). decoding.count_positions, the hook 06.2 counts
    with, adds the rows of every output of the last layer's last LayerNorm: the positions
    that came out of the decoder. Without a cache step t runs the prefix y[:, :t] (t rows);
    with one, step t runs the newest row only, the earlier rows' K, V read from the cache.
    Returns the two counts and the cached path's outputs, (b, n, d_model).
    """
    from lecture17.decoding import count_positions
    from lecture17.tiny_transformer import DecoderLayer, KVCache, memory_keys_values

    stack = []
    for theirs in torch_layers:
        d_model, n_heads = theirs.self_attn.embed_dim, theirs.self_attn.num_heads
        layer = DecoderLayer(d_model, n_heads, theirs.linear1.out_features).double().eval()
        layer.load_from_torch(theirs)
        stack.append(layer)
    y, memory = torch.from_numpy(y), torch.from_numpy(memory)
    counts, cached = {}, []
    with torch.no_grad():
        with count_positions(stack[-1].norm3) as counted:
            for t in range(1, y.shape[1] + 1):
                x = y[:, :t]  # (b, t, d_model): the whole prefix again
                for layer in stack:
                    x = layer(x, memory)  # look-ahead mask on (is_causal)
        counts["without_cache"] = counted["positions"]
        caches = [KVCache(*memory_keys_values(layer.cross_attn, memory)) for layer in stack]
        with count_positions(stack[-1].norm3) as counted:
            for t in range(y.shape[1]):
                x = y[:, t : t + 1]  # (b, 1, d_model): the newest position only
                for layer, cache in zip(stack, caches, strict=True):
                    x = layer.step(x, cache)
                cached.append(x)
        counts["with_cache"] = counted["positions"]
    return counts, torch.cat(cached, dim=1).numpy()  # (b, n, d_model)


def _placement_rows(torch, random_layer, y, memory, n_heads: int) -> list[dict]:
    """§8.2: `placement` (post_ln, pre_ln) → `max_abs_diff` between decoder_layer_forward and
    nn.TransformerDecoderLayer (same random parameters, look-ahead mask, a random memory)."""
    mask = create_look_ahead_mask(y.shape[1])  # (n, n)
    records = []
    for placement, norm_first in PLACEMENTS.items():
        layer = random_layer(norm_first)
        params = decoder_layer_params_from_torch(layer)
        ours = decoder_layer_forward(
            y.numpy(), memory.numpy(), params, n_heads, self_mask=mask, norm_first=norm_first
        )  # (b, n, d_model)
        theirs = layer(y, memory, tgt_mask=_additive_mask(torch, mask)).detach().numpy()
        diff = np.abs(ours - theirs).max()
        records.append(row("max_abs_diff", diff, placement=placement))
    return records


def _incremental_error(y, memory, layers, n_heads: int) -> tuple[float, np.ndarray]:
    """§8.4: max |parallel − prefix by prefix| of a numpy decoder stack (the prefix 1..t's
    last row against row t − 1 of one pass over all positions), and that parallel output."""
    parallel = _decoder_stack(y, memory, layers, n_heads)  # (b, n, d_model), teacher forcing
    worst = 0.0
    for t in range(1, y.shape[1] + 1):
        step = _decoder_stack(y[:, :t], memory, layers, n_heads)[:, -1]  # (b, d_model)
        worst = max(worst, np.abs(step - parallel[:, t - 1]).max())
    return worst, parallel


def _decoding_values(torch, torch_layers, y, memory, n_heads: int) -> dict:
    """§8.4: with the look-ahead mask, position t depends on the first t + 1 inputs only.
    The numpy copy of the stack run once vs prefix by prefix (`_incremental_error`), the
    positions computed without and with a KV cache, and the cached outputs vs the parallel."""
    layers = [decoder_layer_params_from_torch(layer) for layer in torch_layers]
    worst, parallel = _incremental_error(y, memory, layers, n_heads)
    counts, cached = _counted_decoding(torch, torch_layers, y, memory)
    return {
        "parallel_vs_incremental": worst,
        "positions_without_cache": counts["without_cache"],
        "positions_with_cache": counts["with_cache"],
        "parallel_vs_cached": np.abs(cached - parallel).max(),
    }


def decoder_vs_torch(
    *,
    d_model: int,
    n_heads: int,
    d_ff: int,
    tgt_len: int,
    src_len: int,
    batch_size: int,
    n_layers: int,
    seed: int,
) -> pd.DataFrame:
    """decoder_layer_forward vs nn.TransformerDecoderLayer; teacher forcing vs step by step.

    Rows: `placement` (post_ln, pre_ln) → `max_abs_diff` between the numpy layer and PyTorch's
    (same random parameters, float64, dropout 0, look-ahead mask, a random memory);
    no label → `parallel_vs_incremental`: an n_layers numpy decoder (Post-LN) run once on all
    tgt_len positions vs run on the prefixes 1..tgt_len keeping each prefix's last row;
    `positions_without_cache` and `positions_with_cache`: the positions the decoder computed
    decoding step by step without and with a KV cache, counted by a hook on PyTorch copies of
    the same stack (`_counted_decoding`; §8.4's Σ_t t = 36 and 8 at tgt_len 8);
    `parallel_vs_cached`: max |numpy parallel − the cached step-by-step outputs|, so the
    8 counted positions are a decoding that gives the same outputs.
    """
    torch, gen = _torch(seed)

    def random_layer(norm_first):
        return _random_layer(
            torch.nn.TransformerDecoderLayer, d_model, n_heads, d_ff, norm_first, gen
        )

    y = torch.randn(batch_size, tgt_len, d_model, generator=gen, dtype=torch.float64)
    memory = torch.randn(batch_size, src_len, d_model, generator=gen, dtype=torch.float64)
    records = _placement_rows(torch, random_layer, y, memory, n_heads)
    torch_layers = [random_layer(False) for _ in range(n_layers)]  # a Post-LN stack
    records += rows(_decoding_values(torch, torch_layers, y.numpy(), memory.numpy(), n_heads))
    return tidy(records, ["placement"])


# -------------------------------------------------------------------------------------------
# 04.6 padding mask (§8.3)


def _padded_inputs(rng, d_model: int, seq_len: int, n_real: int, batch_size: int, vocab: int):
    """§8.3's random draws, in this order: embeddings (row 0 = pad), W^{Q,K,V,O} and biases,
    tokens (sentence 0: n_real words, then pads); returns the parameters, the tokens (b, n),
    their embeddings x (b, n, d_model) and x with new random pad vectors in sentence 0."""
    embedding = rng.standard_normal((vocab, d_model))  # (vocab, d_model); row 0 = pad
    params = {f"W_{p}": rng.standard_normal((d_model, d_model)) / np.sqrt(d_model) for p in "qkvo"}
    params |= {f"b_{p}": 0.1 * rng.standard_normal(d_model) for p in "qkvo"}
    tokens = rng.integers(1, vocab, size=(batch_size, seq_len))  # (b, n), no pad yet
    tokens[0, n_real:] = 0  # sentence 0: n_real words, then padding
    x = embedding[tokens]  # (b, n, d_model)
    x_new_pads = x.copy()
    x_new_pads[0, n_real:] = rng.standard_normal((seq_len - n_real, d_model))
    return params, tokens, x, x_new_pads


def padding_mask(
    *,
    d_model: int,
    n_heads: int,
    seq_len: int,
    n_real: int,
    batch_size: int,
    vocab_size: int,
    seed: int,
) -> pd.DataFrame:
    """A short sentence padded to seq_len: with the padding mask it is as if it were alone.

    Multi-head numpy self-attention (attention_numpy.multi_head_attention, random parameters)
    on random token embeddings; sentence 0 has n_real tokens and seq_len − n_real pads (id 0),
    the other batch_size − 1 sentences are full. Attention is the only sublayer where
    positions mix (FFN, LayerNorm, residual are per position, §8.3), so it is the one to test.
    Rows: `mask` (padding, none) →
    `max_weight_on_pads`: largest weight any row (padding rows too) and head puts on a pad key;
    `max_diff_vs_alone`: sentence 0's real outputs vs the n_real-token sentence run alone;
    `max_change_new_pads`: change of those outputs when the pad vectors are replaced.
    """
    rng = np.random.default_rng(seed)
    sizes = (d_model, seq_len, n_real, batch_size, vocab_size)
    params, tokens, x, x_new_pads = _padded_inputs(rng, *sizes)
    alone, _ = multi_head_attention(x[:1, :n_real], x[:1, :n_real], params, n_heads)

    pads = tokens == 0  # (b, n)
    records = []
    for name, mask in {"padding": create_padding_mask(tokens), "none": None}.items():
        out, weights = multi_head_attention(x, x, params, n_heads, mask)  # (b, h, n, n)
        out_new, _ = multi_head_attention(x_new_pads, x_new_pads, params, n_heads, mask)
        on_pads = weights[np.broadcast_to(pads[:, None, None, :], weights.shape)]  # pad keys
        real = out[0, :n_real]  # (n_real, d_model), sentence 0's words
        vs_alone = np.abs(real - alone[0]).max()
        new_pads = np.abs(out_new[0, :n_real] - real).max()
        values = {"max_weight_on_pads": on_pads.max(), "max_diff_vs_alone": vs_alone}
        records += rows(values | {"max_change_new_pads": new_pads}, mask=name)
    return tidy(records, ["mask"])
