"""What Nautobot's migrations write into a new, empty database, written after `migrate --run-syncdb`
(tests/sot/nautobot_server.sh): each by the function the migration itself runs, so the data is theirs.

Run inside Nautobot: ``nautobot-server shell -c "$(cat nautobot_seed.py)"``. A schema and data comparison
with a database made by the full `migrate` of Nautobot 3.2.7 is in docs/cabling.md.
"""

import importlib

from django.apps import apps

from nautobot.extras.management import populate_role_choices, populate_status_choices


def migration(app: str, name: str):
    return importlib.import_module(f"nautobot.{app}.migrations.{name}")


# Statuses and roles of every model that has them (extras 0004, 0106, vpn 0002 call these with a model list).
populate_status_choices()
populate_role_choices()
# IP address roles (extras 0062), the Global namespace (ipam 0030), the default VPN profiles (vpn 0002),
# the device uniqueness setting (dcim 0080), the breakout cable types (dcim 0087) and the scheduled-job
# approval workflow with its groups and permissions (extras 0132).
migration("extras", "0062_collect_roles_from_related_apps_roles").create_equivalent_roles_of_ipaddress_role_choices(apps)
migration("ipam", "0030_ipam__namespaces").create_default_namespace(apps, None)
migration("vpn", "0002_populate_defaults").populate_default_vpn_profiles(apps, None)
migration("dcim", "0080_device_name_data_migration").migrate_device_uniqueness_setting(apps, None)
migration("dcim", "0087_populate_default_cable_types").populate_default_cable_types(apps, None)
migration("extras", "0132_approval_workflow_seed_data").create_default_scheduledjob_workflow(apps, None)
