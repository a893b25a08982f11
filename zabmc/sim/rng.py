"""splitmix64 exactly as the db-19 document writes it (C3), including its second multiplier."""

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
MUL1 = 0xBF58476D1CE4E7B5  # the document's constant, not the published ...E5B9 (C3)
MUL2 = 0x94D049BB133111EB


def splitmix64(x: int) -> int:
    """The first output of a splitmix64 generator whose state is `x` (mod 2^64)."""
    z = (x + GAMMA) & MASK64
    z = ((z ^ (z >> 30)) * MUL1) & MASK64
    z = ((z ^ (z >> 27)) * MUL2) & MASK64
    return z ^ (z >> 31)


def election_deadline(seed: int, node_id: int, t: int) -> int:
    """reset_election_deadline(t) (C9)."""
    return t + 150 + splitmix64(seed ^ node_id ^ t) % 150


def delivery_delay(seed: int, src: int, dst: int, t: int) -> int:
    """The network delay of a message sent at tick t (C8)."""
    return 1 + splitmix64(seed ^ src ^ dst ^ t) % 3
