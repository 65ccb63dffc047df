"""Object machinery: what the API server does to every object whatever its kind.

The store (etcd plus the generic registry), the kind table, label/field selectors, PATCH
semantics, version conversion, server-side printing, events and the small helpers over
JSON-shaped objects. Nothing here knows about pods running or traffic flowing.
"""
