"""AlphaZero-style self-play training for boardzoo games."""
