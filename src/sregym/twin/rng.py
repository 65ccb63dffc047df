"""Named, seeded random streams.

Every random choice in the twin draws from a stream named after its purpose ("uid", "names",
"dataplane", "noise" ...), each derived from the run seed by hashing. Adding draws to one stream
never shifts another, so a new feature cannot silently change an existing problem's run.
"""

from __future__ import annotations

import hashlib
import random
import uuid


class RngStreams:
    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self._streams: dict[str, random.Random] = {}

    def stream(self, name: str) -> random.Random:
        rng = self._streams.get(name)
        if rng is None:
            digest = hashlib.sha256(f"{self.seed}:{name}".encode()).digest()
            rng = random.Random(int.from_bytes(digest[:8], "big"))
            self._streams[name] = rng
        return rng

    def uuid(self, name: str = "uid") -> str:
        """A version-4-shaped UUID drawn from a stream."""
        return str(uuid.UUID(int=self.stream(name).getrandbits(128), version=4))

    def suffix(self, length: int = 5, name: str = "names") -> str:
        """A random name suffix in Kubernetes' alphabet (no vowels, no confusable digits)."""
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        rng = self.stream(name)
        return "".join(rng.choice(alphabet) for _ in range(length))
