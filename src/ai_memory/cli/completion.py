"""``ai-memory completion SHELL``: print the shell's completion script (source it, or save it)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer
from typer._completion_classes import completion_init
from typer._completion_shared import get_completion_script

from ai_memory.cli.output import out

Shell = Literal["bash", "zsh", "fish"]
INSTALL = {
    "bash": 'eval "$(ai-memory completion bash)"  # in ~/.bashrc',
    "zsh": 'eval "$(ai-memory completion zsh)"  # in ~/.zshrc',
    "fish": "ai-memory completion fish > ~/.config/fish/completions/ai-memory.fish",
}


def register(app: typer.Typer) -> None:
    completion_init()  # the shells' completion classes, without the <bool> install options

    def completion(
        shell: Annotated[Shell, typer.Argument(help="The shell to complete in.")],
    ) -> None:
        """Print the completion script for SHELL; e.g. eval "$(ai-memory completion bash)"."""
        script = get_completion_script(
            prog_name="ai-memory", complete_var="_AI_MEMORY_COMPLETE", shell=shell
        )
        out.file.write(script if script.endswith("\n") else script + "\n")

    app.command("completion")(completion)
