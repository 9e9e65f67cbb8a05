"""YAML from users, read with bounded work: no aliases, no numbers of thousands of digits.

``yaml.safe_load`` runs no code, but a 1 KB document whose anchors refer to anchors
(``b: [*a, *a, ...]`` nine levels deep) stands for 10^9 items, which every later step
(type checks, error messages, copies) walks in full. boardzoo configs never need
anchors or aliases, so :func:`load` refuses them; it also turns an integer too long for
Python to convert (over 4300 digits) into a YAML error instead of a ValueError, refuses
nesting deeper than :data:`MAX_DEPTH` (PyYAML's composer recurses once per level, so 400
nested brackets end in RecursionError) and refuses a key given twice in one mapping (PyYAML
keeps the last silently, so ``game: loa`` then ``game: ultima`` would train Ultima).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent

#: How deep lists and mappings may nest; a boardzoo config needs three levels.
MAX_DEPTH = 32


class NoAliasLoader(yaml.SafeLoader):
    """A SafeLoader that refuses aliases (``*name``), over-long integers, nesting deeper than
    :data:`MAX_DEPTH` and duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise ComposerError(None, None, f"aliases (*{event.anchor}) are not allowed in "
                                "boardzoo configs; write the value out", event.start_mark)
        if not self.check_event(SequenceStartEvent, MappingStartEvent):
            return super().compose_node(parent, index)
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_DEPTH:
            raise ComposerError(None, None, f"lists or mappings nested more than {MAX_DEPTH} "
                                "deep", self.peek_event().start_mark)
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else id(key_node)
            if key in seen:
                raise ConstructorError(None, None, f"the key {str(key)[:40]!r} is given twice",
                                       key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.Node) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # Python refuses int() of over 4300 digits
            raise ConstructorError(None, None, f"the number {str(node.value)[:20]}... has "
                                   f"{len(str(node.value))} characters", node.start_mark) \
                from None


NoAliasLoader.add_constructor("tag:yaml.org,2002:int", NoAliasLoader.construct_yaml_int)


def load(text: str) -> Any:
    """Parse one YAML document like ``yaml.safe_load``; yaml.YAMLError if it uses an alias."""
    return yaml.load(text, Loader=NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
