"""MAAS: on-prem bare metal, addressed by the on-prem plan (generator/deploy/addresses.py).

Its program: generator/emit/pulumi_targets/maas.py and templates/pulumi/maas/__main__.py.
"""

from __future__ import annotations

from generator.deploy.stack_outputs import MaasOutputs
from generator.deploy.targets import CloudTarget

TARGET = CloudTarget(
    name="maas",
    title="on-prem bare metal with MAAS",
    components="network, tags, compute",
    subnet_reserved=2,  # plain IPv4 subnet: the network and the broadcast address
    stack_outputs=MaasOutputs,
)
