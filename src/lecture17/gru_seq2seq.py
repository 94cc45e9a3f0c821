"""The GRU seq2seq baselines of §9.1: a GRU encoder-decoder (Cho et al. 2014), with or without
Luong's attention (Luong, Pham & Manning 2015), on tiny_transformer's interface
(model(src, tgt_in) -> logits, greedy_decode, attention_weights), so that the experiments loop
over them and the Transformer alike (tiny_transformer.build_model builds either).

References:
1) Cho et al., "Learning Phrase Representations using RNN Encoder-Decoder for Statistical
   Machine Translation", EMNLP 2014 — the GRU encoder-decoder (§9.1).
2) Luong, Pham & Manning, "Effective Approaches to Attention-based Neural Machine
   Translation", EMNLP 2015 — the "general" score and the attentional hidden state (§9.1).

Shapes: batch first, as in tiny_transformer; hidden is the GRU's width, emb_dim its
embeddings'; enc_states (b, n_src, hidden), a decoder state (1, b, hidden) as nn.GRU keeps it.
"""

import torch
from torch import nn

from lecture17._torch_checks import check_tokens


class GRUSeq2Seq(nn.Module):
    """GRU encoder-decoder (Cho 2014), optionally with Luong's attention (§9.1, §9.6).

    The encoder is a unidirectional single-layer GRU; its last state starts the decoder GRU.
    With attention=True, a Luong score of the decoder state h_t and each encoder state h_s,
    the context c_t = sum_s a_ts h_s, and the attentional state h~_t = tanh(W_c [c_t; h_t])
    feed the output layer. Luong et al. (2015) give several equally literal readings of
    "Luong 的写法", all built here:
    - score="general": h_t^T W_a h_s (the default); score="dot": h_t^T h_s (no W_a).
    - input_feeding=False (the default): the decoder GRU runs over the whole target in one
      nn.GRU call during training, and step by step in greedy_decode. input_feeding=True
      (Luong §3.3): each step's input is [embedding of y_{t-1}; h~_{t-1}] (h~_0 = 0), so
      training, too, runs one step at a time.
    """

    SCORES = ("general", "dot")

    def __init__(
        self,
        src_vocab,
        tgt_vocab,
        *,
        emb_dim=64,
        hidden=128,
        attention=False,
        score="general",
        input_feeding=False,
    ):
        super().__init__()
        if score not in self.SCORES:
            raise ValueError(f"unknown score {score!r}; expected one of {self.SCORES}")
        if not attention and (score != "general" or input_feeding):
            raise ValueError("score and input_feeding are readings of attention: attention=True")
        self.src_embed = nn.Embedding(src_vocab, emb_dim)
        self.tgt_embed = nn.Embedding(tgt_vocab, emb_dim)
        self.encoder = nn.GRU(emb_dim, hidden, batch_first=True)
        # input feeding: the previous attentional state h~_{t-1} joins each step's input
        self.decoder = nn.GRU(emb_dim + hidden * input_feeding, hidden, batch_first=True)
        self.attention, self.score_kind, self.input_feeding = attention, score, input_feeding
        if attention:
            if score == "general":
                self.score = nn.Linear(hidden, hidden, bias=False)  # W_a of the "general" score
            self.combine = nn.Linear(2 * hidden, hidden)  # W_c
        self.out = nn.Linear(hidden, tgt_vocab)

    def encode(self, src):
        states, last = self.encoder(self.src_embed(src))  # (b, n_src, hidden), (1, b, hidden)
        keys = None
        if self.attention:  # W_a h_s ("general") or h_s itself ("dot"), once per source
            keys = self.score(states) if self.score_kind == "general" else states
        return states, keys, last

    def attend(self, dec_states, enc_states, keys):
        """Decoder states (b, n_tgt, hidden) -> attentional states h~ (b, n_tgt, hidden) and
        the attention weights (b, n_tgt, n_src)."""
        scores = dec_states @ keys.transpose(1, 2)  # (b, n_tgt, n_src)
        weights = scores.softmax(dim=-1)  # (b, n_tgt, n_src)
        context = weights @ enc_states  # (b, n_tgt, hidden)
        return torch.tanh(self.combine(torch.cat([context, dec_states], dim=-1))), weights

    def readout(self, dec_states, enc_states, keys):
        """Decoder states (b, n_tgt, hidden) -> logits (b, n_tgt, tgt_vocab), attention weights."""
        if not self.attention:
            return self.out(dec_states), None
        attended, weights = self.attend(dec_states, enc_states, keys)
        return self.out(attended), weights  # (b, n_tgt, tgt_vocab)

    def fed_steps(self, tgt_in, enc_states, keys, state):
        """Input feeding (Luong §3.3), one step at a time over tgt_in (b, n_tgt), teacher forced
        -> logits (b, n_tgt, tgt_vocab), weights (b, n_tgt, n_src)."""
        attended = enc_states.new_zeros(enc_states.shape[0], 1, enc_states.shape[2])  # h~_0
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            step_in = torch.cat([self.tgt_embed(tgt_in[:, t : t + 1]), attended], dim=-1)
            dec_state, state = self.decoder(step_in, state)  # (b, 1, hidden)
            attended, w = self.attend(dec_state, enc_states, keys)
            logits.append(self.out(attended))
            weights.append(w)
        return torch.cat(logits, dim=1), torch.cat(weights, dim=1)

    def forward(self, src, tgt_in):
        """src (b, n_src), tgt_in (b, n_tgt) -> logits (b, n_tgt, tgt_vocab) (teacher forcing)."""
        check_tokens(src=src, tgt_in=tgt_in)
        enc_states, keys, last = self.encode(src)
        if self.input_feeding:
            return self.fed_steps(tgt_in, enc_states, keys, last)[0]
        dec_states, _ = self.decoder(self.tgt_embed(tgt_in), last)  # (b, n_tgt, hidden)
        return self.readout(dec_states, enc_states, keys)[0]

    def attention_weights(self, src, tgt_in) -> dict[str, torch.Tensor]:
        """{"cross_attn": (b, n_tgt, n_src)} for the attention model, {} without attention."""
        check_tokens(src=src, tgt_in=tgt_in)
        if not self.attention:
            return {}
        with torch.no_grad():
            enc_states, keys, last = self.encode(src)
            if self.input_feeding:
                return {"cross_attn": self.fed_steps(tgt_in, enc_states, keys, last)[1]}
            dec_states, _ = self.decoder(self.tgt_embed(tgt_in), last)
            return {"cross_attn": self.readout(dec_states, enc_states, keys)[1]}

    @torch.no_grad()
    def greedy_decode(self, src, max_len, bos_id=1):
        """Greedy decoding from BOS, one GRU step at a time -> (b, max_len) tokens."""
        check_tokens(src=src)
        enc_states, keys, state = self.encode(src)
        token = src.new_full((src.shape[0], 1), bos_id)  # (b, 1)
        attended = enc_states.new_zeros(enc_states.shape[0], 1, enc_states.shape[2])  # h~_0
        tokens = []
        for _ in range(max_len):
            logits, state, attended = self.decode_step(token, state, attended, enc_states, keys)
            token = logits.argmax(-1)  # (b, 1)
            tokens.append(token)
        return torch.cat(tokens, dim=1)  # (b, max_len)

    def decode_step(self, token, state, attended, enc_states, keys):
        """One decoding step: token (b, 1), GRU state (1, b, hidden), h~_{t-1} (b, 1, hidden)
        -> logits (b, 1, tgt_vocab), the new state and h~_t (greedy_decode, beam_search)."""
        step_in = self.tgt_embed(token)  # (b, 1, emb_dim)
        if self.input_feeding:
            step_in = torch.cat([step_in, attended], dim=-1)
        dec_state, state = self.decoder(step_in, state)  # (b, 1, hidden)
        if self.input_feeding:
            attended = self.attend(dec_state, enc_states, keys)[0]
            return self.out(attended), state, attended
        return self.readout(dec_state, enc_states, keys)[0], state, attended  # (b, 1, tgt_vocab)
