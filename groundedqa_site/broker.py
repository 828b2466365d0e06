"""kombu's file-system Celery broker, with each message written atomically.

kombu's own transport creates a message under its final name and then writes
it, while consumers list the folder and read whatever matches "<queue>.msg".
A worker that looks between the two reads an empty file and stops with
"Unrecoverable error: JSONDecodeError". bench/e2e.py ran into this within a
minute once polling was fast. Here a message is first written as
"<name>.msg.partial", which no consumer matches, and then renamed into place;
a rename within one folder is atomic, so a consumer sees all of it or nothing.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


def folder_options(folder: Path) -> dict:
    """Create the broker's folders under ``folder`` and return kombu's transport options for them.

    One folder both ways: producers and workers share it on this machine.
    """
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),
        "store_processed": False,
    }


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        # kombu's name scheme: consumers take files in name order, so oldest millisecond first.
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.partial"
        try:
            with open(partial, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            if os.path.exists(partial):
                os.remove(partial)
            raise ChannelError(f"Cannot add message {name!r} to {self.data_folder_out}: {exc}") from exc


class Transport(filesystem.Transport):
    Channel = Channel
