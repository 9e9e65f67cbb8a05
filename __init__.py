"""boardzoo: PettingZoo environments, search agents and self-play training for
Lines of Action, Ultima (Baroque chess) and Monochromatic Whistling.

Importing boardzoo registers every game with PettingZoo's registry (and its single-agent
view and batched vector env with Gymnasium's: ``boardzoo/loa-single-v0``,
``boardzoo/loa-vector-v0``), so
``pettingzoo.make("aec", "boardzoo/loa-v0")`` works next to
``from boardzoo.envs import loa_v0; loa_v0.env()``. This package is also where
the layers are wired together: it adds the learned ``checkpoint`` agent
(boardzoo.training) to the agent kinds of boardzoo.agents, which sit below it.
"""

from __future__ import annotations

__version__ = "0.1.0"

from boardzoo.agents.base import LazyFactory, register_agent
from boardzoo.envs.core.registry import GAMES

#: PettingZoo registry id -> entry point of each game's wrapped env.
ENV_IDS = {f"boardzoo/{game}-v0": f"boardzoo.envs.{game}_v0:env" for game in GAMES}
#: Gymnasium id -> game of each single-agent env (the learner against a boardzoo agent).
GYM_IDS = {f"boardzoo/{game}-single-v0": game for game in GAMES}
#: Gymnasium id -> game of each batched self-play vector env (``gymnasium.make_vec(id,
#: num_envs=N, vectorization_mode="vector_entry_point")``).
VECTOR_IDS = {f"boardzoo/{game}-vector-v0": game for game in GAMES}


def _register() -> None:
    import gymnasium
    import pettingzoo

    for env_id, game in GYM_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point="boardzoo.agents.single_agent:SingleAgentEnv",
                               kwargs={"game": game})
    for env_id, game in VECTOR_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, vector_entry_point="boardzoo.envs.vector:BoardzooVectorEnv",
                               kwargs={"game": game})
    if not hasattr(pettingzoo, "register"):  # PettingZoo < 1.27 has no registry
        return
    registry = pettingzoo.aec_registry
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in registry:
            pettingzoo.register("aec", env_id, entry_point=entry_point)


_register()
# The learned agent lives in boardzoo.training, above boardzoo.agents: wired in here, lazily
# (torch loads on the first checkpoint:... spec), and picklable for worker processes.
register_agent("checkpoint", LazyFactory("boardzoo.training.agent", "from_spec"))
