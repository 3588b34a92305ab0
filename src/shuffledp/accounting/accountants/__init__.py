"""Accountants: thin classes stating name, kind, scope, reference, label and colour, delegating to views."""
