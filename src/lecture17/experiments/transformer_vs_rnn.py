"""Lecture 17 script 05: a tiny Transformer vs GRU seq2seq on sequence reversal (§9)."""
