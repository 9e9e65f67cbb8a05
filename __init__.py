"""boardzoo: PettingZoo environments, search agents and self-play training for
Lines of Action, Ultima (Baroque chess) and Monochromatic Whistling.

Importing boardzoo registers every game with PettingZoo's registry, so
``pettingzoo.make("aec", "boardzoo/loa-v0")`` works next to
``from boardzoo.envs import loa_v0; loa_v0.env()``.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: PettingZoo registry id -> entry point of each game's wrapped env.
ENV_IDS = {
    "boardzoo/loa-v0": "boardzoo.envs.loa_v0:env",
    "boardzoo/ultima-v0": "boardzoo.envs.ultima_v0:env",
    "boardzoo/whistling-v0": "boardzoo.envs.whistling_v0:env",
}


def _register() -> None:
    import pettingzoo

    if not hasattr(pettingzoo, "register"):  # PettingZoo < 1.27 has no registry
        return
    registry = pettingzoo.aec_registry
    for env_id, entry_point in ENV_IDS.items():
        if env_id not in registry:
            pettingzoo.register("aec", env_id, entry_point=entry_point)


_register()
