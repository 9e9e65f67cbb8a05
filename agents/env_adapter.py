"""Drive a PettingZoo env with any agent: the agent plans a whole turn, the env gets actions.

Search agents need the game state, not just the observation planes, so the
adapter reads the unwrapped env's action state. For games where a turn is one
action (LOA, Ultima) that is one lookup; for Whistling, where a chained capture
is several hop actions by the same player, the planned turn is expanded into
its hop actions once and replayed one per call.
"""

from __future__ import annotations

from typing import Any

from .base import Agent


class EnvAgent:
    """Wraps an :class:`Agent` to return env actions for the env's current action state."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self._plan: list[int] = []  # hop actions of the planned turn still to play
        self._key: Any = None  # key of the position the plan was made in

    @property
    def planned(self) -> bool:
        """True while actions of an already planned turn remain to be played."""
        return bool(self._plan)

    def act(self, env: Any) -> int:
        """Return the action for the agent to move in ``env`` (wrapped or not)."""
        raw = env.unwrapped
        return self.act_on(raw.actions, raw.action_state)

    def act_on(self, actions: Any, astate: Any) -> int:
        """Return the action for action state ``astate`` of an ActionGame ``actions``."""
        game = actions.game_state(astate)
        # Mid-turn the rules position is still the one the turn started from.
        if self._plan and game.key() == self._key and self._plan[0] in actions.legal_actions(
                astate):
            return self._plan.pop(0)
        text = game.move_to_str(self.agent.select_move(game))
        # The notation names the first action; only the rest of the turn needs a search.
        plan = _actions_for(actions, astate, text, [actions.str_to_action(astate, text)])
        if plan is None:
            raise RuntimeError(f"no action sequence plays {text!r}; env and rules disagree")
        self._plan, self._key = plan[1:], game.key()
        return plan[0]


def _actions_for(actions: Any, astate: Any, text: str,
                 first: list[int] | None = None) -> list[int] | None:
    """Return the actions that play whole turn ``text`` from ``astate`` (depth-first search),
    trying only ``first`` as the first action when given."""
    for action in actions.legal_actions(astate) if first is None else first:
        after, done = actions.apply_action(astate, action)
        if done is not None:
            if done == text:
                return [action]
            continue
        rest = _actions_for(actions, after, text)
        if rest is not None:
            return [action, *rest]
    return None
