"""`harness.register_arm`: how a plugin adds an arm, through the arms registry's own registration function.

The arms registry (harness.agents.arms) is being reshaped to take arms from outside the package through a
`register_arm(arm)` of its own. This indirection looks that function up when it is called, so the public name
and the plugins that use it are stable now; once arms.register_arm exists, `harness.register_arm` can name it
directly and this module can go.
"""

from __future__ import annotations

from typing import Any

from harness.agents import arms
from harness.errors import UserError


def register_arm(arm: Any) -> None:
    """Register `arm` with harness.agents.arms.register_arm (same argument, same rules); a UserError saying so
    when this version of the arms registry has no such function yet, instead of an AttributeError deep in a
    plugin."""
    register = getattr(arms, "register_arm", None)
    if register is None:
        raise UserError("this version of the harness cannot register an arm from outside the package yet "
                        "(harness.agents.arms has no register_arm); arms are declared in harness/agents/arms.py")
    register(arm)
