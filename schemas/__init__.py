"""Canonical tables: what a row is (``tables``), how its DDL is made (``ddl``) and which rules a row must keep
(``rules``)."""
