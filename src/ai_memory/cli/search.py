"""``ai-memory search`` (HTTP, the same function as ``memory_query``) and ``ai-memory embed``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ai_memory.cli.options import (
    DataDir,
    Json,
    Project,
    ServerUrl,
    Workspace,
    client_for,
    load_config,
    scope_for,
)
from ai_memory.cli.output import emit_json, err, keep_whole, out

if TYPE_CHECKING:
    from rich.table import Table


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("embed")(embed)


def search(
    query: Annotated[str, typer.Argument(help="What to look for, in plain words or FTS5 syntax.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", help="Search this project too ('p' or 'ws/p'); repeatable."),
    ] = None,
    everywhere: Annotated[bool, typer.Option("--global", help="Search every project.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 10,
    kind: Annotated[str | None, typer.Option(help="Only pages of this kind.")] = None,
    tier: Annotated[str | None, typer.Option(help="Only pages of this tier.")] = None,
    tag: Annotated[str | None, typer.Option(help="Only pages with this tag.")] = None,
    path_prefix: Annotated[str | None, typer.Option(help="Only paths starting so.")] = None,
    include_superseded: Annotated[bool, typer.Option(help="Older versions too.")] = False,
    include_expired: Annotated[bool, typer.Option(help="Expired pages too.")] = False,
    as_of: Annotated[
        str | None, typer.Option(help="Search the versions latest at this ISO time.")
    ] = None,
    pin_first: Annotated[bool, typer.Option(help="Pinned pages before the others.")] = False,
    explain: Annotated[bool, typer.Option(help="Show why each hit ranks where it does.")] = False,
    as_json: Json = False,
) -> None:
    """Search pages (and raw observations when no page matches)."""
    config = load_config(data_dir)
    params: dict[str, Any] = {"q": query, "limit": limit}
    if everywhere:
        params["global"] = "true"
    else:
        resolved = scope_for(workspace, project)
        params["workspace"] = resolved.workspace
        params["project"] = resolved.project
    if scope:
        params["scope"] = scope
    for key, value in (
        ("kind", kind),
        ("tier", tier),
        ("tag", tag),
        ("path_prefix", path_prefix),
        ("as_of", as_of),
    ):
        if value is not None:
            params[key] = value
    for key, flag in (
        ("include_superseded", include_superseded),
        ("include_expired", include_expired),
        ("pin_first", pin_first),
        ("explain", explain),
    ):
        if flag:
            params[key] = "true"
    from ai_memory.cli.local_read import or_local, search_local

    data = or_local(
        config,
        lambda: client_for(config, server).request("GET", "/api/v1/search", params=params),
        lambda conn: search_local(conn, config, params),
    )
    if as_json:
        emit_json(data)
        return
    _print_hits(data, explain)


def _print_hits(data: dict[str, Any], explain: bool) -> None:
    if data["hits"]:
        out.print(_hit_table("hits", data["hits"], explain))
    elif data["raw_hits"]:
        from rich.table import Table

        table = Table("session", "kind", "when", "snippet", title="no page matched; observations")
        for raw in data["raw_hits"]:
            table.add_row(raw["session_id"], raw["kind"], raw["created_at"], raw["snippet"])
        out.print(keep_whole(table, "session"))
    else:
        out.print("no matches")
    if data.get("global_hits"):
        out.print(_hit_table("shared (_global)", data["global_hits"], explain))
    if explain and data.get("explain"):
        summary = data["explain"]
        out.print(f"FTS query: {summary['fts']}  ({summary['mode']})", highlight=False)
        for name, stream in summary["streams"].items():
            note = f" — {stream['note']}" if stream.get("note") else ""
            out.print(
                f"  {name}: {stream['candidates']} candidates, weight {stream['weight']}, "
                f"{stream['ms']:.2f} ms{note}",
                highlight=False,
            )


def _snippet(hit: dict[str, Any]) -> str:
    """A session hit shows the turns that matched (the first is its snippet)."""
    turns = hit.get("turns") or []
    if not turns:
        return str(hit["snippet"])
    return "\n".join(
        f"turn {t['observation_id']} ({t['kind']}, {t['created_at'][:16]}): {t['snippet']}"
        for t in turns
    )


def _hit_table(title: str, hits: list[dict[str, Any]], explain: bool) -> Table:
    columns = ["#", "score", "path", "title", "kind", "snippet"]
    if explain:
        columns.append("why")
    from rich.table import Table

    table = Table(*columns, title=title)
    several = title != "hits" or len({(h["workspace"], h["project"]) for h in hits}) > 1
    for rank, hit in enumerate(hits, 1):
        flags = "".join(
            f" [{flag}]" for flag in ("pinned", "superseded", "expired") if hit.get(flag)
        )
        path = f"{hit['project']}:{hit['path']}" if several else hit["path"]
        row = [str(rank), f"{hit['score']:.4f}", path + flags, hit["title"], hit["kind"]]
        row.append(_snippet(hit))
        if explain:
            row.append(_why(hit.get("explain") or {}))
        table.add_row(*row)
    return keep_whole(table, "path")


def _why(explain: dict[str, Any]) -> str:
    parts = [f"{name}#{s['rank']}" for name, s in explain.get("streams", {}).items()]
    parts.append(f"authority x{explain.get('authority', 1.0)}")
    if explain.get("matched_entities"):
        parts.append("entities: " + ", ".join(explain["matched_entities"]))
    if explain.get("edge"):
        parts.append(f"linked from {explain['edge']['from']}")
    return "; ".join(parts)


def embed(
    data_dir: DataDir = None,
    batch: Annotated[int, typer.Option(min=1, max=1024, help="Chunks per batch.")] = 32,
) -> None:
    """Embed every page that has no vector of the configured model (refused while serving)."""
    from rich.progress import Progress

    from ai_memory.core.errors import ConfigError
    from ai_memory.maintenance.lock import ServerLock
    from ai_memory.retrieval.backfill import backfill
    from ai_memory.store.readers import ReaderPool
    from ai_memory.store.writer import Writer

    config = load_config(data_dir)
    if config.embeddings.provider == "none":
        raise ConfigError(
            'embeddings are off: set embeddings.provider = "local" in config.toml '
            "(or AI_MEMORY_EMBEDDINGS__PROVIDER=local) and install the 'embeddings' extra"
        )
    with ServerLock(config.data_dir, operation="embed"):
        writer = Writer(config.db_path, synchronous=config.store.synchronous)
        writer.start()
        readers = ReaderPool(config.db_path, 1)
        try:
            with Progress(console=err, transient=True) as progress:
                task = progress.add_task("embedding", total=None)

                def advance(done: int, total: int) -> None:
                    progress.update(task, completed=done, total=total)

                report = backfill(writer, readers, config, batch, advance)
        finally:
            writer.stop()
            readers.close()
    out.print(
        f"embedded {report.pages} page(s) into {report.chunks} chunk vector(s) "
        f"with {report.model} ({report.dim} dimensions); {report.stale} stale vector(s) removed"
    )
