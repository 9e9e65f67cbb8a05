"""Agents that play boardzoo games (random, greedy, MCTS, alpha-beta, human, learned); the
arena that plays them against each other is the subpackage :mod:`boardzoo.agents.arena`."""

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
