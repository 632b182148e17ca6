"""``blueprint rehearse``: bring a generated build's network up on this machine before the hardware arrives.

* ``ethernet``: every switch of a routed Ethernet/RoCE fabric in its own network namespace, one veth pair
  per switch-to-switch cable of ``cabling/cables.csv``, Debian's FRR (zebra + bgpd) started from the
  generated configuration (``frr.conf``, or the routing part of NVUE's ``startup.yaml`` rendered as
  Cumulus Linux renders it: ``nvue.py``); checks sessions, reachability and ECMP first hops.
* ``infiniband``: ibsim on the build's expected net file, ``ibnetdiscover`` compared with it, OpenSM
  started from the generated ``opensm.conf`` / ``partitions.conf``.
* ``cleanup``: every namespace, process and directory a rehearsal made is removed on every exit path.
* ``limits``: kernel neighbour-table limits raised for large runs and restored.
* ``sample``: a fabric larger than the machine is rehearsed as one scalable unit with its spines/cores.

It reads only the build directory (``blueprint generate`` output), never the blueprint.
"""
