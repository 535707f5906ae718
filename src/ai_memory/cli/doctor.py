"""``ai-memory doctor``: what is wrong with this install, and the command that fixes each."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ai_memory.cli.options import DataDir, Json
from ai_memory.cli.output import emit_json, out, styled

STYLES = ("green", "yellow", "red")  # by severity: ok, warning, error


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(
    data_dir: DataDir = None,
    as_json: Json = False,
    timeout: Annotated[
        float, typer.Option(min=0.1, max=60.0, help="Seconds to wait for the server.")
    ] = 3.0,
) -> None:
    """Check the install end to end; exit 0 when healthy, 1 on warnings, 2 on errors."""
    from rich.table import Table

    from ai_memory.doctor.findings import Severity, worst
    from ai_memory.doctor.run import run_checks

    home = Path(os.environ.get("HOME") or Path.home())
    findings = run_checks(data_dir, home, os.environ, timeout)
    status = int(worst(findings))
    if as_json:
        emit_json(
            {"status": Severity(status).name.lower(), "findings": [f.to_dict() for f in findings]}
        )
        sys.exit(status)
    table = Table("check", "", "finding", "fix", show_lines=False)
    for finding in findings:
        name = finding.severity.name.lower()
        table.add_row(
            finding.check,
            styled(name, STYLES[int(finding.severity)]),
            finding.message,
            finding.fix or "",
        )
    out.print(table)
    summary = {0: "healthy", 1: "working, with warnings", 2: "broken: run the fixes above"}
    out.print(styled(summary[status], STYLES[status]))
    sys.exit(status)
