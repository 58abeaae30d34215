"""Rules turn a ``World`` into ``Finding``s. Public API for rule authors."""

from __future__ import annotations

from analyzer.rules.api import EventRef, Finding, Related, Rule, RuleMetadataError, Severity, Status, and_list

__all__ = ["EventRef", "Finding", "Related", "Rule", "RuleMetadataError", "Severity", "Status", "and_list"]
