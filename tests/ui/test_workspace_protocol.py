"""Every registered workspace conforms to explorer.workspace_api.Workspace: the hooks the main
window calls exist, the capabilities it declares are exactly the commands it implements, and the
main window's menus follow the declared capabilities."""
from __future__ import annotations

import inspect

import pytest
from PyQt6.QtCore import pyqtBoundSignal
from PyQt6.QtWidgets import QWidget

from explorer import workspaces as registry
from explorer.workspace_api import COMMANDS, FEATURES, KNOWN_CAPABILITIES, Workspace

KEYS = list(registry.WORKSPACES)


def test_all_four_workspaces_are_registered():
    assert {"cahn_hilliard", "graphs", "occupancy", "flint"} <= set(KEYS)
    from kernels.registry import Registry
    assert isinstance(registry.WORKSPACES, Registry)
    assert [s.key for s in registry.WORKSPACES.values()] == KEYS and registry.get("graphs").title == "Graphs"
    spec = registry.get("flint")
    assert registry.register(spec) is spec                     # the same spec again: no-op
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(registry.WorkspaceSpec("flint", "Impostor", spec.factory))
    with pytest.raises(KeyError):
        registry.get("nope")


def _overrides(ws, name: str) -> bool:
    """The workspace's class defines ``name`` itself (or through its own mixins), not the default."""
    for klass in type(ws).__mro__:
        if klass is Workspace:
            return False
        if name in vars(klass):
            return True
    return False


@pytest.mark.parametrize("key", KEYS)
def test_registered_workspace_conforms(main_window, key):
    ws = main_window.workspace(key)
    assert isinstance(ws, QWidget) and isinstance(ws, Workspace)
    assert isinstance(ws.status_changed, pyqtBoundSignal)
    assert ws.message_bar is not None and callable(ws.message_bar.show_message)
    caps = type(ws).CAPABILITIES
    assert isinstance(caps, frozenset) and caps <= KNOWN_CAPABILITIES, caps - KNOWN_CAPABILITIES
    # a command is declared exactly when the workspace has that method
    for cmd in COMMANDS:
        assert (cmd in caps) == callable(getattr(ws, cmd, None)), f"{key}: {cmd} declared ≠ implemented"
    # a feature is declared exactly when the workspace overrides its hooks
    for feat, hooks in FEATURES.items():
        for hook in hooks:
            assert (feat in caps) == _overrides(ws, hook), f"{key}: feature {feat} vs hook {hook}"
    if "colormaps" in caps:
        assert isinstance(ws.colormap_changed, pyqtBoundSignal) and ws.colormaps()
    if "set_plots_visible" in caps:
        assert _overrides(ws, "plots_visible")
    # every Workspace hook keeps the base signature (the main window calls them positionally)
    for name, base in vars(Workspace).items():
        if inspect.isfunction(base) and not name.startswith("_"):
            own = getattr(type(ws), name)
            assert len(inspect.signature(own).parameters) == len(inspect.signature(base).parameters), name
    # the workspace's own menu names methods it has; MENU_TEXT renames only known commands
    for _text, method, _shortcut, _tip in ws.extra_actions():
        assert callable(getattr(ws, method, None)), f"{key}: extra action {method} missing"
    assert set(ws.MENU_TEXT) <= set(COMMANDS)
    assert isinstance(ws.caption(), str) and isinstance(ws.busy(), bool)


@pytest.mark.parametrize("key", KEYS)
def test_menus_follow_the_declared_capabilities(main_window, key):
    ws = main_window.show_workspace(key)
    for act, method in main_window.menus.bound_actions:
        assert act.isEnabled() == ws.supports(method), (key, method)
    assert main_window.act_figure.isEnabled() == ws.supports("figures")
    assert main_window.m_cmap.isEnabled() == ws.supports("colormaps")
