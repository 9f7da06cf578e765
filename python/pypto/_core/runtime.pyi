from typing import Annotated

import numpy
from numpy.typing import NDArray


def shared_bytes(nbytes: int) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,))]:
    """
    A zeroed uint8 array in memory shared with isolated runs: tensors placed in it reach the device without being copied.
    """

def shutdown() -> None:
    """
    Ends the device servers of isolated runs and the simulated cores kept for runs in this process; the next run starts them again. Idempotent.
    """
