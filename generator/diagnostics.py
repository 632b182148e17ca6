"""Diagnostic ids the tool prints that are not rules: load, schema, catalogue, emitter and verify problems.

Together with the rules (``generator.rules.registry``) this is the one registry of every id a user can
see; ``blueprint explain ID`` accepts each of them, and a test fails when code prints an id that is in
neither. Rules keep their documentation on their class; these problems have no class, so their text
lives here.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.findings import Severity


@dataclass(frozen=True)
class Diagnostic:
    id: str
    severity: Severity
    title: str
    doc: str
    rationale: str
    fix: str
    stage: str  # where it comes from: load, schema, catalogue, build, verify


_ALL: tuple[Diagnostic, ...] = (
    Diagnostic(
        "LOAD000",
        Severity.ERROR,
        "the blueprint file cannot be read",
        "The file does not exist, is a directory, or cannot be opened (permissions).",
        "nothing can be checked without the file",
        "check the path; `-` reads the blueprint from standard input",
        "load",
    ),
    Diagnostic(
        "LOAD001",
        Severity.ERROR,
        "the file is not valid YAML text",
        "The file is not UTF-8 text, contains a NUL byte, or is not well-formed YAML (the location is "
        "the first place the parser could not continue). Duplicate keys are also reported here.",
        "a blueprint is a UTF-8 YAML document",
        "fix the YAML at the location given (indentation, an unclosed quote or bracket, a repeated key)",
        "load",
    ),
    Diagnostic(
        "LOAD002",
        Severity.ERROR,
        "the file is too large or too deeply nested",
        "Blueprints are bounded in size, nesting depth and alias expansion so that a hostile or "
        "broken file cannot exhaust memory (a YAML 'billion laughs').",
        "real blueprints are a few kilobytes; the bounds are far above any real one",
        "remove the repeated aliases or the generated content; describe pools with `count`",
        "load",
    ),
    Diagnostic(
        "LOAD003",
        Severity.ERROR,
        "the document is not a blueprint mapping",
        "The file is empty, or its top level is a list or a scalar instead of a mapping of keys.",
        "a blueprint is a mapping that starts with `apiVersion: cluster-blueprint/v1`",
        "start from `blueprint init` or `blueprint examples`",
        "load",
    ),
    Diagnostic(
        "SCHEMA",
        Severity.ERROR,
        "the blueprint does not match the schema",
        "A key is unknown, a required key is missing, or a value has the wrong type or is out of range. "
        "The message names the key and the hint suggests the closest valid spelling or value.",
        "every later stage relies on the schema; `blueprint schema` gives editors the same checks",
        "fix the key or value at the location given; see docs/blueprint.md",
        "schema",
    ),
    Diagnostic(
        "SUP001",
        Severity.WARNING,
        "a suppression names an unknown rule",
        "An entry of `suppress:` names a rule id that does not exist, so it suppresses nothing.",
        "a misspelt suppression silently stops working; saying so keeps suppressions honest",
        "use an id from `blueprint explain --list`, or remove the entry",
        "schema",
    ),
    Diagnostic(
        "CAT001",
        Severity.ERROR,
        "a catalogue reference is unknown",
        "The blueprint names a GPU, server, NIC, switch, fabric technology or interconnect generation "
        "that the hardware catalogue does not have. The hint names the closest entries.",
        "every figure the rules use (ports, speeds, power, memory) comes from the catalogue entry",
        "use an id from `blueprint catalog SECTION`, or describe your hardware in a side file named by "
        "`catalog: my-hardware.yaml` in the blueprint (same sections as blueprints/catalog/data/)",
        "catalogue",
    ),
    Diagnostic(
        "CAT002",
        Severity.ERROR,
        "the `catalog:` side file cannot be used",
        "The file named by `catalog:` cannot be read, is not a mapping of catalogue sections, or one of "
        "its entries does not match the catalogue schema.",
        "the side file extends the shipped catalogue; a broken entry would give wrong numbers",
        "fix the side file as the message says; its sections are those of blueprints/catalog/data/",
        "catalogue",
    ),
    Diagnostic(
        "CAT003",
        Severity.ERROR,
        "two pools produce the same host name",
        "Host names come from each pool's name pattern and count; two pools produced the same name.",
        "host names key the inventory, the cabling plan and DNS; a duplicate would merge two machines",
        "give the pools different names or `hostname` patterns",
        "catalogue",
    ),
    Diagnostic(
        "ANS001",
        Severity.ERROR,
        "the management network cannot address every host",
        "Writing the Ansible inventory assigns each host a management address from "
        "`deployment.maas.management_cidr`; the network is not valid or has too few addresses.",
        "a host without an address cannot be provisioned or configured",
        "use a larger `management_cidr` (the message gives the size needed)",
        "build",
    ),
    Diagnostic(
        "VER001",
        Severity.ERROR,
        "the fabric to verify does not exist",
        "The blueprint has no fabric of the name given to `--fabric`.",
        "there is no plan to compare the discovered fabric with",
        "use one of the fabric names the message lists",
        "verify",
    ),
    Diagnostic(
        "VER002",
        Severity.ERROR,
        "the fabric is not InfiniBand",
        "An ibnetdiscover view was asked for an Ethernet or RoCE fabric.",
        "ibnetdiscover only sees InfiniBand subnets",
        "verify Ethernet/RoCE fabrics with LLDP (`lldpcli show neighbors -f json` files)",
        "verify",
    ),
    Diagnostic(
        "VER003",
        Severity.ERROR,
        "a planned cable ends on an unknown device",
        "The plan has a cable whose end is not one of its devices; the expected fabric cannot be written.",
        "this means the plan is inconsistent, which is a bug",
        "report it with the blueprint",
        "verify",
    ),
    Diagnostic(
        "VER004",
        Severity.ERROR,
        "two planned cables use the same port",
        "Two cables of the plan end on the same device port; the expected fabric cannot be written.",
        "this means the plan is inconsistent, which is a bug",
        "report it with the blueprint",
        "verify",
    ),
    Diagnostic(
        "VER005",
        Severity.ERROR,
        "a name is too long for an ibsim net file",
        "A device name makes a net-file line longer than ibsim accepts.",
        "ibsim would reject or truncate the line",
        "use shorter pool, switch or site names",
        "verify",
    ),
)

DIAGNOSTICS: dict[str, Diagnostic] = {d.id: d for d in _ALL}

# Old spellings the tool printed before one registry existed; `explain` still answers them.
RENAMED: dict[str, str] = {"PLAN001": "PLN001"}


def diagnostic_by_id(diag_id: str) -> Diagnostic | None:
    return DIAGNOSTICS.get(diag_id.upper())
