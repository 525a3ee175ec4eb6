"""pinb: run and record the runnable claims of the book *Pi Agents*.

Layers (each imports only the ones below it):

- ``pinb.ai``        model access: messages, content blocks, the scripted faux provider (like ``pi-ai``)
- ``pinb.agent``     the agent core: loop, events, tool execution, queues (like ``pi-agent-core``)
- ``pinb.app``       the agent application: sessions, extensions, settlement (like ``pi-coding-agent``)
- ``pinb.scenario``  declarative scenarios on two backends (the stand-in and real Pi), traces, diffs
- ``pinb.chapters``  per-chapter claims and the helpers their notebooks call
- ``pinb.kit``       claims ledger, headless execution, run store, status, reports, CLI
"""

__version__ = "0.1.0"

#: The Pi release the stand-in models (the first of `pinb.backends.PI_RELEASES`).
from pinb.backends import PI_MODELLED_VERSION as PI_MODELLED_VERSION
