#!/usr/bin/env python3
"""Helper script of the gh-fix-ci skill (look-alike)."""

print("ok")
