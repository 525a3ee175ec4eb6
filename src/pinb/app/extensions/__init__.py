"""Extensions, like pi-coding-agent's ``core/extensions``: event and result models, the API, the runner."""

from pinb.app.extensions.api import (
    Extension,
    ExtensionAPI,
    ExtensionFactory,
    ExtensionLoadError,
    ExtensionRuntime,
    LoadExtensionsResult,
    RegisteredTool,
    load_extensions,
)
from pinb.app.extensions.context import ExtensionContext, ExtensionErrorRecord
from pinb.app.extensions.events import EVENT_MODELS, ExtensionEvent
from pinb.app.extensions.runner import (
    BoundaryOutcome,
    ContextActions,
    ExtensionRunner,
    InvalidHandlerResult,
    ProjectTrustOutcome,
)

__all__ = [
    "EVENT_MODELS",
    "BoundaryOutcome",
    "ContextActions",
    "Extension",
    "ExtensionAPI",
    "ExtensionContext",
    "ExtensionErrorRecord",
    "ExtensionEvent",
    "ExtensionFactory",
    "ExtensionLoadError",
    "ExtensionRunner",
    "ExtensionRuntime",
    "InvalidHandlerResult",
    "LoadExtensionsResult",
    "ProjectTrustOutcome",
    "RegisteredTool",
    "load_extensions",
]
