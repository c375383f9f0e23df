#!/usr/bin/env python3
"""Helper script of the skill-creator skill (look-alike)."""

print("ok")
