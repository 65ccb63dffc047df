"""Generate the twin's vendored Kubernetes 1.32 schemas (`src/sregym/twin/machinery/data/`).

Source: the `kubernetes-validate` package (PyPI, Apache-2.0), whose wheel bundles the upstream
OpenAPI definitions of every Kubernetes minor as JSON Schema (`kubernetes-json-schema/
v1.32.0-local/_definitions.json`, generated from kubernetes/kubernetes `api/openapi-spec`). We turn
them back into the OpenAPI v3 `components.schemas` shape the API server serves (`$ref`s under
`#/components/schemas/`, `type` without the added `null`, a `$ref` with siblings wrapped in
`allOf`, Quantity and IntOrString as upstream declares them) and write them gzipped, so the twin
needs neither the 22 MB wheel nor a network at run time.

    pip install kubernetes-validate==1.37.0
    python scripts/kube_openapi_schemas.py
"""

from __future__ import annotations

import gzip
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

VERSION = "v1.32.0"
OUT = Path(__file__).resolve().parents[1] / "src/sregym/twin/machinery/data/kubernetes-1.32-schemas.json.gz"
REF_PREFIX = "#/$defs/"

# Upstream's v3 documents declare these as `oneOf`s with a description (v2: strings); the JSON
# Schema copy dropped the descriptions, which we restore from the upstream source.
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": {
        "description": (
            "Quantity is a fixed-point representation of a number. It provides convenient "
            "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() "
            "accessors.\n\nThe serialization format is:\n\n``` <quantity>        ::= "
            "<signedNumber><suffix>\n\n\t(Note that <suffix> may be empty, from the \"\" case in "
            "<decimalSI>.)\n\n<digit>           ::= 0 | 1 | ... | 9 <digits>          ::= <digit> | "
            "<digit><digits> <number>          ::= <digits> | <digits>.<digits> | <digits>. | "
            ".<digits> <sign>            ::= \"+\" | \"-\" <signedNumber>    ::= <number> | "
            "<sign><number> <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI> "
            "<binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei\n\n\t(International System of units; "
            "See: http://physics.nist.gov/cuu/Units/binary.html)\n\n<decimalSI>       ::= m | \"\" "
            "| k | M | G | T | P | E\n\n\t(Note that 1024 = 1Ki but 1000 = 1k; I didn't choose the "
            "capitalization.)\n\n<decimalExponent> ::= \"e\" <signedNumber> | \"E\" <signedNumber> "
            "```\n\nNo matter which of the three exponent forms is used, no quantity may represent "
            "a number greater than 2^63-1 in magnitude, nor may it have more than 3 decimal places. "
            "Numbers larger or more precise will be capped or rounded up. (E.g.: 0.1m will rounded "
            "up to 1m.) This may be extended in the future if we require larger or smaller "
            "quantities.\n\nWhen a Quantity is parsed from a string, it will remember the type of "
            "suffix it had, and will use the same type again when it is serialized.\n\nBefore "
            "serializing, Quantity will be put in \"canonical form\". This means that "
            "Exponent/suffix will be adjusted up or down (with a corresponding increase or "
            "decrease in Mantissa) such that:\n\n- No precision is lost - No fractional digits "
            "will be emitted - The exponent (or suffix) is as large as possible.\n\nThe sign will "
            "be omitted unless the number is negative.\n\nExamples:\n\n- 1.5 will be serialized "
            "as \"1500m\" - 1.5Gi will be serialized as \"1536Mi\"\n\nNote that the quantity will "
            "NEVER be internally represented by a floating point number. That is the whole point "
            "of this exercise.\n\nNon-canonical values will still parse as long as they are well "
            "formed, but will be re-emitted in their canonical form. (So always use canonical form, "
            "or don't use kubectl at all.)\n\nThis format is intended to make it difficult to use "
            "these numbers without writing some sort of special handling code in the hopes that "
            "that will cause implementors to also use a fixed point implementation."),
        "oneOf": [{"type": "string"}, {"type": "number"}],
    },
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {
        "description": (
            "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
            "marshalling and unmarshalling, it produces or consumes the inner type.  This allows "
            "you to have, for example, a JSON field that can accept a name or number."),
        "format": "int-or-string",
        "oneOf": [{"type": "integer"}, {"type": "string"}],
    },
}


def convert(node: Any) -> Any:
    if isinstance(node, list):
        return [convert(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$schema", "$id"):
            continue
        if key == "type" and isinstance(value, list):
            kinds = [t for t in value if t != "null"]
            value = kinds[0] if len(kinds) == 1 else kinds
        elif key == "properties":  # names, not keywords (JSONSchemaProps has a `$ref` field)
            out[key] = {name: convert(prop) for name, prop in value.items()}
            for name in ("apiVersion", "kind"):  # enums the JSON Schema copy added
                if isinstance(out[key].get(name), dict):
                    out[key][name].pop("enum", None)
            continue
        elif key == "$ref":
            value = "#/components/schemas/" + value.split(REF_PREFIX, 1)[1]
        elif key == "enum" and node.get("type") in (["string", "null"], "string") \
                and value and None in value:
            value = [v for v in value if v is not None]
        out[key] = convert(value)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def main() -> None:
    spec = find_spec("kubernetes_validate")  # located, not imported: only its data is read
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install kubernetes-validate==1.37.0 first")
    package = Path(next(iter(spec.submodule_search_locations)))
    root = package / "kubernetes-json-schema" / f"{VERSION}-local"
    defs = json.loads((root / "_definitions.json").read_text())["$defs"]
    schemas = {name: SPECIAL.get(name) or convert(schema) for name, schema in sorted(defs.items())}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"source": f"kubernetes-validate {VERSION}-local/_definitions.json",
                          "schemas": schemas}, sort_keys=True, separators=(",", ":"))
    OUT.write_bytes(gzip.compress(payload.encode(), mtime=0))
    print(f"{OUT}: {len(schemas)} schemas, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
