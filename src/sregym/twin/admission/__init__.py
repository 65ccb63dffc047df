"""API-server-side behaviour run on every write: defaulting, validation and admission plugins.

Each module registers an `AdmissionPlugin` with `@admission_plugin`; the twin installs them into
the store's mutator/validator chain by `order` (< 100 defaulting/validation, >= 100 admission).
"""
