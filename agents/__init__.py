"""Agents that play boardzoo games (random, greedy, MCTS, alpha-beta, human, learned)."""

from .base import (
    AGENT_FACTORIES,
    Agent,
    RandomAgent,
    UnknownAgentError,
    make_agent,
    register_agent,
)

__all__ = [
    "AGENT_FACTORIES", "Agent", "RandomAgent", "UnknownAgentError", "make_agent", "register_agent",
]
