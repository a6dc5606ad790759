"""In-graph greedy and beam search with the GNMT length and coverage penalties."""

from zoo.decoding.beam_search import beam_search
from zoo.decoding.greedy import greedy_search, max_target_lengths
from zoo.decoding.penalties import coverage_penalty, gnmt_score, length_penalty

__all__ = [
    "beam_search",
    "coverage_penalty",
    "gnmt_score",
    "greedy_search",
    "length_penalty",
    "max_target_lengths",
]
