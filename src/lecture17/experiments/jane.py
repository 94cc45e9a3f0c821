"""The Jane sentence of §2.3, "Jane visite l'Afrique en septembre": the inputs that demos 01.1
and 02.5 share (4 dims that mean something, W^K = W^V = I).

It is a module of its own so that a rule's code inputs follow what its jobs compute: editing
01.1's function reruns script 01's demos, not 02.5's or the runs recorded from script 02.
"""

import numpy as np

JANE_WORDS = ("Jane", "visite", "l'Afrique", "en", "septembre")
JANE_DIMS = ("person", "action", "place", "time")


def jane_embeddings() -> np.ndarray:
    """X, shape (5, 4): one row per word, columns person / action / place / time (§2.3).

    The lecture does not print the embedding of "en". 0.25·(1, 1, 1, 1) is inferred (reading
    aid flag F08): it is the only value that gives the printed A⟨3⟩ and visite's 0.379.
    """
    person, action, place, time_ = np.eye(4)  # (4,) each
    en = 0.25 * np.ones(4)  # F08: inferred, not printed in the lecture
    return np.stack([person, action, place, en, time_])  # (5, 4)


def jane_query_matrix(strength: float) -> np.ndarray:
    """W^Q, shape (4, 4), rows-are-tokens (q = x W^Q) (§2.3).

    Person, place and time ask "which action?"; the action asks "who? where?".
    """
    person, action, place, time_ = range(4)
    W_q = np.zeros((4, 4))
    W_q[[person, place, time_], action] = strength
    W_q[action, [person, place]] = strength
    return W_q
