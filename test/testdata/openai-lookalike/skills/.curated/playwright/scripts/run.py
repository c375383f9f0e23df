#!/usr/bin/env python3
"""Helper script of the playwright skill (look-alike)."""

print("ok")
