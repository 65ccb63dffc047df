"""The problem catalogue: one package per app, one module per problem family.

Every module here is imported lazily by the problem registry; its `@problem` builders register.
"""
