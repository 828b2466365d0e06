"""kombu's file-system Celery broker, with each message written atomically, and the
order in which a worker takes its queues on every broker that lets us choose it.

kombu's own transport creates a message under its final name and then writes
it, while consumers list the folder and read whatever matches "<queue>.msg".
A worker that looks between the two reads an empty file and stops with
"Unrecoverable error: JSONDecodeError". bench/e2e.py ran into this within a
minute once polling was fast. Here a message is first written as
"<name>.msg.partial", which no consumer matches, and then renamed into place;
a rename within one folder is atomic, so a consumer sees all of it or nothing.

Queue order: a worker consuming several queues takes them in turn (kombu's
round robin), so a job the reaper re-queued after its worker died waited for
its turn among every busy stage queue: with one QA worker killed and the other
working off a backlog, the ``requeued`` queue got one message in five or six,
and a stage whose whole worker died was picked up 18-28 s after it was
re-queued (bench faults, load 27-31). ``FIRST_QUEUES`` are now looked at before the others
whenever a worker has a free process; the others keep taking turns, so no stage
starves while no stage is being recovered. The file-system transport's channel
does it here; Redis takes ``RequeuedFirstCycle`` as its ``queue_order_strategy``
(settings). With RabbitMQ the broker decides which queue's message a worker
gets next; this order does not apply there.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from queue import Empty
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from kombu.utils.scheduling import FairCycle, round_robin_cycle

# Question stages the reaper sends again because their worker died (groundedqa_site.jobs):
# a worker with a free process takes these before any other queue's messages.
REQUEUED_QUEUE = "requeued"
FIRST_QUEUES = (REQUEUED_QUEUE,)


def first_queues_first(queues: list[str]) -> list[str]:
    """``queues`` with ``FIRST_QUEUES`` moved to the front, the others in their order."""
    return [q for q in queues if q in FIRST_QUEUES] + [q for q in queues if q not in FIRST_QUEUES]


class RequeuedFirstCycle(round_robin_cycle):
    """Redis's queue order (``queue_order_strategy``): ``FIRST_QUEUES``, then the rest in turn.

    Redis BRPOPs the keys in the order ``consume`` gives and pops from the first
    one that holds a message; ``rotate`` still moves a used queue to the back,
    which is what keeps the other queues taking turns.
    """

    def consume(self, n):
        return first_queues_first(self.items[:n])


# What settings give a Redis broker.
REDIS_TRANSPORT_OPTIONS = {"queue_order_strategy": f"{__name__}:{RequeuedFirstCycle.__name__}"}


class FirstQueuesFairCycle(FairCycle):
    """The file-system transport's queue order: ``FIRST_QUEUES``, then kombu's fair turn."""

    def get(self, callback, **kwargs):
        for queue in [q for q in self.resources if q in FIRST_QUEUES]:
            try:
                return self.fun(queue, callback, **kwargs)
            except self.predicate:
                continue
        return super().get(callback, **kwargs)


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
    def _reset_cycle(self):
        self._cycle = FirstQueuesFairCycle(self._get_and_deliver, self._active_queues, Empty)

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

    @property
    def default_connection_params(self):
        # A folder has no host. kombu's virtual transports default to "localhost", and a
        # connection made from "filesystem://" then logged "No hostname was supplied" in every
        # process that sent or consumed a message.
        return {"port": self.default_port}
