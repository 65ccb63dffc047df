"""Quantities as the kubelet prints them in its messages (`resource.Quantity.String()`).

The eviction manager builds byte counts with BinarySI (`100Mi`, or plain bytes when no binary
suffix divides them exactly) and inode counts with DecimalSI (`300k`); its messages show them
so, and an agent reading an eviction message sees the same text as on a real node.
"""

from __future__ import annotations


def quantity_text(num_bytes: float) -> str:
    """resource.Quantity's String() of a byte count the kubelet built with BinarySI."""
    value = int(num_bytes)
    if value <= 0:
        return "0" if value == 0 else f"-{quantity_text(-value)}"
    for suffix, scale in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)


def decimal_text(value: int) -> str:
    """resource.Quantity's String() of a count built with DecimalSI (`300k`, `1500`)."""
    if value <= 0:
        return "0" if value == 0 else f"-{decimal_text(-value)}"
    for suffix, scale in (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if value % scale == 0:
            return f"{value // scale}{suffix}"
    return str(value)
