"""Outside engines: boardzoo's engine protocol, both sides of it.

* :mod:`.protocol`: the codec, every message with its ``format`` and ``parse``, the ``go``
  :class:`~.protocol.Limits`, the version and the forfeit reasons;
* :mod:`.process`: an engine's process, read and written with deadlines and always ended
  with everything it started;
* :mod:`.client`: the ``engine:COMMAND`` agent, which plays an outside program in the arena;
* :mod:`.server`: ``boardzoo engine AGENT``, any boardzoo agent served as an engine.

The names below are the package's public ones (``boardzoo.agents.engine.EngineAgent``, ...);
the agent registry builds ``engine:`` specs with :func:`from_spec`.
"""

from .client import (
    AGENT_KIND,
    COMMAND,
    FIELD_CHARS,
    INFO_KEY_CHARS,
    INFO_KEYS,
    INFO_VALUE_CHARS,
    EngineAgent,
    EngineError,
    find_program,
    from_spec,
    keep_info,
    shell_words,
)
from .protocol import (
    CRASHED,
    FEATURES,
    ILLEGAL,
    NO_ANSWER,
    PROTOCOL_VERSION,
    REASONS,
    TIMEOUT,
    Limits,
    ProtocolError,
    parse_info,
)

__all__ = [
    "AGENT_KIND", "COMMAND", "CRASHED", "FEATURES", "FIELD_CHARS", "ILLEGAL", "INFO_KEYS",
    "INFO_KEY_CHARS", "INFO_VALUE_CHARS", "NO_ANSWER", "PROTOCOL_VERSION", "REASONS",
    "TIMEOUT", "EngineAgent", "EngineError", "Limits", "ProtocolError", "find_program",
    "from_spec", "keep_info", "parse_info", "shell_words",
]
