"""Repeated matching pennies: the smallest game that exercises the whole engine."""
