"""The inputs of the lecture's worked examples, printed where the example is in the report.

A student redoing §2.3, §5.1 or exercise 1 by hand needs the matrices the code used: they are
read from the code that builds them (experiments.jane) and from the build's config,
never retyped, and written as LaTeX (the Markdown keeps it; the HTML page shows MathML).
"""

from lecture17.experiments.jane import JANE_DIMS, JANE_WORDS, jane_embeddings, jane_query_matrix
from lecture17.experiments.scaling_multihead import HEAD_QUESTIONS


def latex_matrix(matrix) -> str:
    rows = [" & ".join(format(float(v), "g") for v in row) for row in matrix]
    # in braces: the parentheses then open and close their own group, and stretch (MathML)
    return r"{\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}}"


def jane_inputs(settings: dict) -> str:
    """§2.3 (demo 01.1): X, W^Q and the strength from the config."""
    X, W_q = jane_embeddings(), jane_query_matrix(settings["strength"])
    return (
        f"**输入 Inputs**（演示 01.1，行 = 词 rows are words：{'、'.join(JANE_WORDS)}；"
        f"列 = 含义：{' / '.join(JANE_DIMS)}）：$X = {latex_matrix(X)}$，"
        f"$W^Q = {latex_matrix(W_q)}$（强度 strength {settings['strength']:g}，来自配置），"
        f"$W^K = W^V = I$，$d_k = {X.shape[1]}$。en 那一行是从讲义的数字反推的 "
        "the row of en is inferred from the lecture's digits（F08）。"
    )


def heads_inputs(settings: dict) -> str:
    """§5.1 (demo 02.5): the query strength from the config and what each head asks."""
    asks = "、".join(f"{h} → {d}" for h, d in HEAD_QUESTIONS.items())
    return (
        "**输入 Inputs**（演示 02.5）：$X$ 同 §2.3 the X of §2.3，"
        f"$W^K = W^V = I$，$d_k = {jane_embeddings().shape[1]}$；"
        "$W^Q$ 只有 visite（动作 action）那一行非零 only visite's row is set："
        f"在它问的维度上放强度 strength {settings['strength']:g}（来自配置；讲义没给，"
        "从讲义印出的权重反推 inferred from the printed weights，F03）。"
        f"一个头全问 one head asks all：{' + '.join(HEAD_QUESTIONS.values())}；"
        f"三个头各问一个 one question per head：{asks}。"
    )


def exercise_inputs(settings: dict) -> str:
    """Exercise 1 (demo 13.1): Q, K and V from the config (Q and K reconstructed, F09)."""
    Q, K, V = (settings[f"ex1_{m}"] for m in ("queries", "keys", "values"))
    return (
        "**练习 1 的输入 Exercise 1's inputs**（来自配置）："
        f"$Q = {latex_matrix(Q)}$，$K = {latex_matrix(K)}$，$V = {latex_matrix(V)}$，"
        f"$d_k = {len(Q[0])}$。讲义副本丢了 Q 和 K，这是能复现讲义全部答案的重建 "
        "reconstructed to reproduce every printed answer（F09）；V 和 $q_3$ 来自讲义的答案。"
    )


# demo -> the function that prints its inputs from the demo's settings
INPUTS = {"01.1": jane_inputs, "02.5": heads_inputs, "13.1": exercise_inputs}
