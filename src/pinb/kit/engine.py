"""pinb's papermill engine: papermill's execution without its per-cell saves.

papermill's own engine writes the whole notebook at the start and end of every cell, which grows with cells ×
outputs and turns a 6 s notebook into an 18 s one. This engine keeps the rest of papermill (parameter injection,
cell metadata, the error cell marked, the executed notebook always written) and writes the notebook once:

- when execution ends normally, papermill itself writes it (with its error markers if a cell raised);
- when execution stops any other way (a cell timeout, a dead or killed kernel, an exception in the client), the
  engine marks the cell that was running as failed and writes the notebook before the exception goes on.

`execute_run` also holds on to the notebook being executed (`Progress`), so that if the executing thread cannot
finish (a client stuck after its kernel was killed) the notebook as far as it got is still written.

It also records `default_parameters` (the values the notebook's `parameters` cell declares, in papermill's own
format: name, inferred type, default as written, help), which papermill 2.x leaves empty.
"""

from __future__ import annotations

import threading
from typing import Any

from nbclient.exceptions import CellExecutionError
from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines
from papermill.inspection import _infer_parameters
from papermill.iorw import write_ipynb
from papermill.log import logger
from papermill.utils import merge_kwargs, remove_args

ENGINE_NAME = "pinb"


class Progress:
    """What the executing thread shares with the thread that watches it: the notebook, and whether it is final."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.manager: _FinalSaveManager | None = None
        self.written = False

    def seal(self) -> None:
        """Write the notebook as far as it got, unless it already was; from now on nothing writes it again (and
        an execution that has not begun yet never begins)."""
        with self.lock:
            if self.manager is not None and not self.written:
                self.manager.mark_running_cell_failed()
                self.manager.finish(write=True)
            self.written = True


class _FinalSaveManager(NotebookExecutionManager):
    """papermill's execution manager with its saves turned into no-ops; `finish` writes once."""

    def __init__(self, nb: Any, output_path: str | None, **kwargs: Any) -> None:
        super().__init__(nb, output_path=None, **kwargs)
        self.final_path = output_path
        self.running: int | None = None

    def cell_start(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> None:
        self.running = cell_index
        super().cell_start(cell, cell_index, **kwargs)

    def cell_complete(self, cell: Any, cell_index: int | None = None, **kwargs: Any) -> None:
        super().cell_complete(cell, cell_index, **kwargs)
        self.running = None

    def mark_running_cell_failed(self) -> None:
        """For a notebook written while a cell is still running (its client stuck)."""
        if self.running is not None and self.running < len(self.nb.cells):
            self.cell_exception(self.nb.cells[self.running], cell_index=self.running)

    def finish(self, *, write: bool) -> None:
        self.notebook_complete()
        if write and self.final_path:
            write_ipynb(self.nb, self.final_path)


class _Client(PapermillNotebookClient):
    def papermill_execute_cells(self) -> None:
        """papermill's loop, except that a cell stopped by anything but its own error (a timeout, a dead kernel)
        is marked as the failed cell too."""
        for index, cell in enumerate(self.nb.cells):
            try:
                self.nb_man.cell_start(cell, index)
                self.execute_cell(cell, index)
            except CellExecutionError as ex:
                self.nb_man.cell_exception(self.nb.cells[index], cell_index=index, exception=ex)
                break
            except BaseException as ex:
                self.nb_man.cell_exception(self.nb.cells[index], cell_index=index, exception=ex)
                raise
            finally:
                self.nb_man.cell_complete(self.nb.cells[index], cell_index=index)


class PinbEngine(NBClientEngine):
    @classmethod
    def execute_notebook(  # type: ignore[override]
        cls,
        nb: Any,
        kernel_name: str,
        output_path: str | None = None,
        progress_bar: bool = True,
        log_output: bool = False,
        autosave_cell_every: int = 30,
        pinb_progress: Progress | None = None,
        **kwargs: Any,
    ) -> Any:
        progress = pinb_progress or Progress()
        nb.metadata.papermill["default_parameters"] = {
            p.name: p._asdict() for p in _infer_parameters(nb, name=kernel_name)
        }
        manager = _FinalSaveManager(nb, output_path, progress_bar=False, log_output=log_output, autosave_cell_every=0)
        manager.notebook_start()
        with progress.lock:
            if progress.written:
                raise RuntimeError("the run was stopped before its notebook started")
            progress.manager = manager
        try:
            cls.execute_managed_notebook(manager, kernel_name, log_output=log_output, **kwargs)
        except BaseException:
            progress.seal()
            raise
        with progress.lock:
            if progress.written:  # the watching thread gave up on this one and wrote it: it is final
                raise RuntimeError("the notebook was already written when execution ended")
            manager.finish(write=False)  # papermill writes it next, with its error markers if a cell raised
            progress.written = True
        return manager.nb

    @classmethod
    def execute_managed_notebook(  # type: ignore[override]
        cls,
        nb_man: NotebookExecutionManager,
        kernel_name: str,
        log_output: bool = False,
        stdout_file: Any = None,
        stderr_file: Any = None,
        start_timeout: int = 60,
        execution_timeout: int | None = None,
        **kwargs: Any,
    ) -> Any:
        """`NBClientEngine.execute_managed_notebook` with pinb's client."""
        kwargs = remove_args(["input_path"], **kwargs)
        safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
        final_kwargs = merge_kwargs(
            safe_kwargs,
            timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
            startup_timeout=start_timeout,
            kernel_name=kernel_name,
            log=logger,
            log_output=log_output,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )
        return _Client(nb_man, **final_kwargs).execute()


papermill_engines.register(ENGINE_NAME, PinbEngine)
