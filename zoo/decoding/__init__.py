"""In-graph greedy and beam search with the GNMT length and coverage penalties.

The penalties (`zoo.decoding.penalties`) and the length limit
(`zoo.decoding.beam_search.max_target_lengths`) are imported from their modules.
"""

from zoo.decoding.beam_search import beam_search
from zoo.decoding.greedy import greedy_search

__all__ = ["beam_search", "greedy_search"]
